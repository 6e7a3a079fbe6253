import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pyRepr } from '@stoa/core';
import { catalogJson, toolCatalogueText } from './describe';
import { buildCatalog } from './manifest';
import { discoverSkills } from './skills';

describe('agent-facing text', () => {
  it('renders Python reprs of defaults', () => {
    expect([null, true, false, 3, "it's", [1, 'a'], { k: 1 }].map(pyRepr)).toEqual([
      'None',
      'True',
      'False',
      '3',
      "'it\\'s'",
      "[1, 'a']",
      "{'k': 1}",
    ]);
  });

  it('lists tools with required parameters first and short type names', () => {
    const { tools } = buildCatalog(
      {
        package: 'p',
        tools: [
          {
            name: 'f',
            description: 'Does f.\nMore.',
            parameters: [
              { name: 'n', type: 'int', default: 2 },
              { name: 'g', type: 'networkx.Graph' },
            ],
          },
        ],
      },
      'x',
    );
    expect(toolCatalogueText(tools)).toBe(
      'Available tool functions (call directly in your code):\n  - f(g: Graph, n: int = 2): Does f.\n\nCall list_tools() in your code for full signatures and documentation.',
    );
    expect(toolCatalogueText([])).toBe('');
  });

  it('publishes the reference ToolDefinition JSON with types as strings', () => {
    const { tools, states } = buildCatalog(
      {
        package: 'p',
        tools: [
          {
            name: 'f',
            description: 'd',
            parameters: [
              { name: 'x', type: 'str' },
              { name: 'g', type: 'networkx.Graph', default: null },
            ],
            returns: { name: 'r', type: 'int' },
            requires: ['a.b'],
          },
        ],
      },
      'x',
    );
    const json = catalogJson({ serverName: 's', tools, states, skills: [] });
    expect(json).toEqual({
      server_name: 's',
      tools: [
        {
          name: 'f',
          description: 'd',
          required_parameters: [{ name: 'x', type: 'builtins.str', description: '', default: null }],
          optional_parameters: [{ name: 'g', type: 'networkx.Graph', description: '', default: null }],
          return_spec: [{ name: 'r', type: 'builtins.int', description: '' }],
          module: 'p.f',
          server_name: null,
          state_transition: { requires: ['a.b'], produces: [] },
          affordances: [],
          id: 0,
        },
      ],
      skills: [],
      states: [],
    });
  });
});

describe('discoverSkills', () => {
  it('reads front matter recursively in name order, defaults the domain to the parent directory, skips nameless files', () => {
    const root = mkdtempSync(join(tmpdir(), 'skills-'));
    const dir = join(root, 'chem', 'skills');
    mkdirSync(join(dir, 'nested'), { recursive: true });
    writeFileSync(join(dir, 'b.md'), '---\nname: beta\ndescription: second\nstates: chem.a\n---\nbody');
    writeFileSync(join(dir, 'nested', 'a.md'), '---\nname: alpha\nstates: [chem.a, chem.b]\n---\n# A');
    writeFileSync(join(dir, 'c.md'), '# no front matter');
    const skills = discoverSkills(dir);
    expect(skills.map((s) => [s.name, s.domain, s.states])).toEqual([
      ['beta', 'chem', ['chem.a']],
      ['alpha', 'chem', ['chem.a', 'chem.b']],
    ]);
    expect(skills[0]?.content).toBe('---\nname: beta\ndescription: second\nstates: chem.a\n---\nbody');
  });
});
