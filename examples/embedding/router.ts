/**
 * A router assembled in code over two executors built in the same process. Build once (`npm run build`), then
 *   npx tsx examples/embedding/router.ts              # MCP at http://127.0.0.1:8300/mcp
 * The executors listen on free loopback ports; the router gets their URLs from code, not from a YAML file.
 * PORT and STOA_DATA_DIR override the router's port and the data directory of all three.
 */
import { join, resolve } from 'node:path';
import { createExecutor, createRouter, type StoaServer } from 'stoa';

/** Two executors (alpha: the demo's tools, beta: bare Python) and a router `lab` over both. */
export async function buildNetwork(): Promise<{ router: StoaServer; executors: StoaServer[] }> {
  const dataDir = resolve(process.env.STOA_DATA_DIR ?? './data/embedded-network');
  const demo = resolve(__dirname, '../servers/demo');
  const executor = (name: string, extra: Record<string, unknown>) =>
    createExecutor(
      {
        name,
        data_dir: join(dataDir, name),
        server: { host: '127.0.0.1', port: 0 },
        auth: { mode: 'noop' },
        sandbox: { network: 'none', filesystem: 'host' },
        ...extra,
      },
      {},
      { env: { PATH: process.env.PATH } }, // each executor its own data dir and port, whatever the shell sets
    );
  const alpha = await executor('alpha', {
    tools: { manifest: join(demo, 'tools.yaml') },
    skills: { dir: join(demo, 'skills') },
  });
  const beta = await executor('beta', { description: 'Plain Python, no domain tools.' });
  const urls = [await alpha.listen(0), await beta.listen(0)];
  const router = await createRouter({
    name: 'lab',
    description: 'One endpoint for alpha and beta.',
    server: { host: '127.0.0.1', port: 8300 },
    auth: { mode: 'noop' },
    upstreams: [
      { name: 'alpha', url: `${urls[0]}/mcp` },
      { name: 'beta', url: `${urls[1]}/mcp` },
    ],
  });
  return { router, executors: [alpha, beta] };
}

if (require.main === module) {
  void (async () => {
    const { router, executors } = await buildNetwork();
    const url = await router.listen();
    process.stdout.write(`embedded router listening: ${url}/mcp\n`);
    const stop = async () => {
      await router.close();
      for (const e of executors) await e.close();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
  })();
}
