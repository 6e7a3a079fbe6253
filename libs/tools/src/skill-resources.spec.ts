import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SkillResources } from './skill-resources';
import type { SkillDef } from './tools.types';

const skill = (name: string, content: string): SkillDef => ({
  name,
  description: '',
  domain: 'lab',
  states: [],
  content,
  path: `/skills/${name}.md`,
});
const good = skill('csv-summary', '---\nname: csv-summary\ndescription: Sum a column\nlicense: MIT\n---\n# Steps\nÄ\n');

describe('SkillResources', () => {
  it('lists a skill at skill://{server}/{name}/SKILL.md with its front matter verbatim and the digest and size of its bytes', async () => {
    const [entry] = await new SkillResources('lab', [good]).list();
    const bytes = Buffer.from(good.content, 'utf8');
    expect(entry).toEqual({
      uri: 'skill://lab/csv-summary/SKILL.md',
      frontmatter: { name: 'csv-summary', description: 'Sum a column', license: 'MIT' },
      resources: [
        {
          uri: 'skill://lab/csv-summary/SKILL.md',
          digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
          size: bytes.length,
        },
      ],
    });
  });

  it('reads SKILL.md back as markdown, and answers undefined for any other URI', async () => {
    const resources = new SkillResources('lab', [good]).resources;
    const principal = { id: 'p', scopes: [] } as never;
    expect(await resources.read(principal, 'skill://lab/csv-summary/SKILL.md')).toMatchObject({
      contents: [{ mimeType: 'text/markdown', text: good.content }],
      cache: { cacheScope: 'public' },
    });
    expect(await resources.read(principal, 'skill://other/csv-summary/SKILL.md')).toBeUndefined();
  });

  it('leaves out skills whose names break the Agent Skills naming rules or that have no description', async () => {
    const skills = new SkillResources('lab', [
      skill('Bad_Name', '---\nname: Bad_Name\ndescription: x\n---\n'),
      skill('no-description', '---\nname: no-description\n---\n'),
      good,
    ]);
    expect((await skills.list()).map((s) => s.frontmatter.name)).toEqual(['csv-summary']);
    expect(await skills.get(undefined, 'skill://lab/Bad_Name/SKILL.md')).toBeUndefined();
  });
});
