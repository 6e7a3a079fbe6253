import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { CacheHint, McpResource, ReadResult, ResourceProvider, SkillEntry, SkillProvider } from '@stoa/mcp';
import { frontMatter } from './skills';
import type { SkillDef } from './tools.types';

/** Agent Skills naming rules: 1–64 lowercase letters, digits and single inner hyphens. */
const SKILL_NAME = /^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
/** A server's skills change only with its config (a restart): listings and files may be shared and kept a while. */
const SKILL_CACHE: CacheHint = { ttlMs: 300_000, cacheScope: 'public' };
const logger = new Logger('SkillResources');

interface Served {
  entry: SkillEntry;
  resource: McpResource;
  text: string;
}

/**
 * A server's skills over the Skills extension (SEP-2640): each skill is `skill://{server}/{name}/SKILL.md` (the
 * server's name as the first path segment keeps skills of several servers apart behind a router), listed with its
 * front matter verbatim and the SHA-256 digest and size of its one file, and readable with resources/read.
 */
export class SkillResources implements SkillProvider {
  readonly cache = SKILL_CACHE;
  private readonly byUri = new Map<string, Served>();

  constructor(server: string, skills: readonly SkillDef[]) {
    for (const skill of skills) {
      const served = serve(server, skill);
      if (served) this.byUri.set(served.entry.uri, served);
    }
  }

  list(): Promise<SkillEntry[]> {
    return Promise.resolve([...this.byUri.values()].map((s) => s.entry));
  }

  get(_principal: unknown, uri: string): Promise<SkillEntry | undefined> {
    return Promise.resolve(this.byUri.get(uri)?.entry);
  }

  /** As a resource provider: the SKILL.md files (the same for every caller). */
  get resources(): ResourceProvider {
    return {
      cache: { list: SKILL_CACHE, templates: SKILL_CACHE },
      list: () => Promise.resolve([...this.byUri.values()].map((s) => s.resource)),
      templates: () => Promise.resolve([]),
      read: (_principal, uri) => Promise.resolve(this.read(uri)),
    };
  }

  private read(uri: string): ReadResult | undefined {
    const s = this.byUri.get(uri);
    return s && { contents: [{ uri, mimeType: 'text/markdown', text: s.text }], cache: SKILL_CACHE };
  }
}

function serve(server: string, skill: SkillDef): Served | undefined {
  const front = frontMatter(skill.content);
  const description = typeof front?.description === 'string' ? front.description : '';
  if (!SKILL_NAME.test(skill.name) || front?.name !== skill.name || !description) {
    logger.warn(
      { skill: skill.name, file: skill.path },
      'skill left out of the skills extension: its name breaks the Agent Skills naming rules (lowercase letters, digits, hyphens) or it has no description; load_<name>_skill still serves it',
    );
    return undefined;
  }
  const uri = `skill://${server}/${skill.name}/SKILL.md`;
  const bytes = Buffer.from(skill.content, 'utf8');
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  return {
    entry: {
      uri,
      frontmatter: { ...front, name: skill.name, description },
      resources: [{ uri, digest, size: bytes.length }],
    },
    resource: { uri, name: skill.name, description, mimeType: 'text/markdown', size: bytes.length },
    text: skill.content,
  };
}
