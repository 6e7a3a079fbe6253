/**
 * An executor built in code with three extension points: a custom tool search, a custom `{name}_send`
 * destination and a validate hook. Build once (`npm run build`), then run it with
 *   npx tsx examples/embedding/executor.ts            # MCP at http://127.0.0.1:8200/mcp
 * PORT and STOA_DATA_DIR override the port and the data directory, as for `node dist/apps/executor/main.js`;
 * EXAMPLE_OUTBOX_DIR says where the `outbox` destination writes.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  createExecutor,
  type DomainCatalog,
  type ExecutionHooks,
  type Publisher,
  type SearchCategory,
  type SearchMatches,
  type StoaServer,
  type ToolSearchBackend,
} from 'stoa';

/**
 * A stand-in for a vector database or Elasticsearch: a tool's score is the share of the query's words found in
 * its name and description (1 = every word). Stoa validates the query and turns these names into hits.
 */
export class KeywordSearch implements ToolSearchBackend {
  private docs: { name: string; kind: 'tools' | 'skills'; text: string }[] = [];

  index(catalog: DomainCatalog): void {
    this.docs = [
      ...catalog.tools.map((t) => ({
        name: t.name,
        kind: 'tools' as const,
        text: words(`${t.name} ${t.description}`),
      })),
      ...catalog.skills.map((s) => ({
        name: s.name,
        kind: 'skills' as const,
        text: words(`${s.name} ${s.description}`),
      })),
    ];
  }

  search(query: string, top: number, category: SearchCategory): SearchMatches {
    const terms = words(query).split(' ').filter(Boolean);
    const ranked = (kind: 'tools' | 'skills') =>
      this.docs
        .filter((d) => d.kind === kind)
        .map((d) => ({
          name: d.name,
          score: terms.length ? terms.filter((t) => d.text.includes(t)).length / terms.length : 1,
        }))
        .filter((m) => m.score > 0)
        .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
        .slice(0, top);
    return {
      tools: category === 'skills' ? [] : ranked('tools'),
      skills: category === 'tools' ? [] : ranked('skills'),
    };
  }
}

/** `{name}_send(to='outbox')`: writes what the agent sends into a directory, one file per transfer. */
export function outboxPublisher(dir: string): Publisher {
  return {
    name: 'outbox',
    description: "written to the team's outbox directory as <transfer_id>-<name>",
    async send(item, request) {
      await mkdir(dir, { recursive: true });
      const file = `${request.transferId}-${item.name.replace(/[^\w.-]/g, '_')}`;
      await pipeline(item.stream(), createWriteStream(join(dir, file)));
      return { remote_uri: `outbox://${file}` };
    },
  };
}

/** Refuses shell escapes with a message that tells the agent what to use instead. */
export const noShellHooks: ExecutionHooks = {
  validate(code) {
    if (/\bos\.system\s*\(/.test(code))
      return 'os.system is disabled on this server. Use subprocess.run([...], capture_output=True) so the output lands in the result.';
    return undefined;
  },
};

/** The executor over the demo's tools and skills, with the three extensions. */
export function buildExecutor(): Promise<StoaServer> {
  const demo = resolve(__dirname, '../servers/demo');
  return createExecutor(
    {
      name: 'embedded',
      description: 'An executor built in TypeScript with a custom search, an outbox destination and a validate hook.',
      data_dir: './data/embedded',
      server: { host: '127.0.0.1', port: 8200 },
      auth: { mode: 'noop' },
      // As the demo: runs without bubblewrap (no network still); drop it for the confined default.
      sandbox: { network: 'none', filesystem: 'host' },
      tools: { manifest: join(demo, 'tools.yaml') },
      skills: { dir: join(demo, 'skills') },
    },
    {
      toolSearch: new KeywordSearch(),
      publishers: [outboxPublisher(resolve(process.env.EXAMPLE_OUTBOX_DIR ?? './data/embedded/outbox'))],
      hooks: noShellHooks,
    },
  );
}

function words(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, ' ');
}

if (require.main === module) {
  void (async () => {
    const server = await buildExecutor();
    const url = await server.listen();
    process.stdout.write(`embedded executor listening: ${url}/mcp\n`);
    process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
    process.once('SIGINT', () => void server.close().then(() => process.exit(0)));
  })();
}
