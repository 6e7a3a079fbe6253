import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { parse as parseYaml } from 'yaml';
import type { SkillDef } from './tools.types';

const logger = new Logger('Skills');

/**
 * Markdown skills with YAML front matter under `dir` (recursive, sorted). Files without a front-matter
 * `name` are skipped with a warning. `domain` defaults to the name of the skills directory's parent.
 */
export function discoverSkills(dir: string, domain?: string): SkillDef[] {
  const root = resolve(dir);
  const skillDomain = domain ?? basename(dirname(root));
  const skills: SkillDef[] = [];
  const seen = new Map<string, string>();
  for (const file of listMarkdown(root)) {
    const content = readFileSync(file, 'utf8');
    const front = frontMatter(content);
    const name = typeof front?.name === 'string' ? front.name.trim() : '';
    if (!name) {
      logger.warn({ file }, 'skill skipped: no front-matter name');
      continue;
    }
    if (seen.has(name)) {
      logger.warn({ file, first: seen.get(name) }, `duplicate skill name '${name}' skipped`);
      continue;
    }
    seen.set(name, file);
    const states = front?.states;
    skills.push({
      name,
      description: typeof front?.description === 'string' ? front.description.trim() : '',
      domain: skillDomain,
      states: Array.isArray(states) ? states.map(String) : typeof states === 'string' ? [states] : [],
      content,
      path: file,
    });
  }
  return skills;
}

function listMarkdown(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...listMarkdown(full));
    else if (entry.endsWith('.md')) out.push(full);
  }
  return out;
}

/** The YAML front matter of a markdown text as an object, or undefined when it has none (or it is not a mapping). */
export function frontMatter(text: string): Record<string, unknown> | undefined {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match?.[1]) return undefined;
  try {
    const doc: unknown = parseYaml(match[1]);
    return doc && typeof doc === 'object' ? (doc as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
