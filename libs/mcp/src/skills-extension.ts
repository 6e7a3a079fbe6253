import { type McpServer, ProtocolError, ProtocolErrorCode, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Principal } from '@stoa/core';
import { type CacheHint, withHint } from './resources';

/** The Skills extension identifier (SEP-2640). */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';

/** One file of a skill: its resource URI, `sha256:{hex}` digest and byte size. */
export interface SkillFile {
  uri: string;
  digest: string;
  size: number;
}

/** A skill entry of `skills/list` and `skills/get` (SEP-2640): SKILL.md's URI, its frontmatter verbatim, its files. */
export interface SkillEntry {
  uri: string;
  frontmatter: { name: string; description: string; [key: string]: unknown };
  resources: SkillFile[] | 'dynamic';
}

/** Where `skills/list` and `skills/get` look skills up, for the caller. */
export interface SkillProvider {
  list(principal: Principal): Promise<SkillEntry[]>;
  /** The entry of the skill whose SKILL.md is `uri`, or undefined when this server serves none there. */
  get(principal: Principal, uri: string): Promise<SkillEntry | undefined>;
  cache: CacheHint;
}

/** The answer to `skills/get` for a URI that names no skill here: -32602 (as the extension requires). */
export function skillNotFound(uri: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Skill not found: '${uri}' is not the SKILL.md of a skill this server serves. List the skills with skills/list.`,
    { uri },
  );
}

/** The extension's capability entry: an empty settings object (no `resources/directory/read`). */
export const skillsCapability = { [SKILLS_EXTENSION]: {} };

/**
 * `skills/list` (one page: entries are small, a server's skills are few) and `skills/get`. Cache hints go on
 * 2026-07-28 results only, as on the base cacheable results.
 */
export function registerSkillMethods(
  server: McpServer,
  provider: SkillProvider,
  era: 'legacy' | 'modern',
  caller: (ctx: ServerContext) => Principal,
): void {
  server.server.setRequestHandler(
    'skills/list',
    { params: z.looseObject({ cursor: z.string().optional() }) },
    async (_params, ctx) => withHint({ skills: await provider.list(caller(ctx)) }, provider.cache, era),
  );
  server.server.setRequestHandler(
    'skills/get',
    { params: z.looseObject({ uri: z.string() }) },
    async ({ uri }, ctx) => {
      const skill = await provider.get(caller(ctx), uri);
      if (!skill) throw skillNotFound(uri);
      return withHint({ skill }, provider.cache, era);
    },
  );
}
