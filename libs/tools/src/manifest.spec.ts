import { describe, expect, it } from 'vitest';
import { ConfigError } from '@stoa/config';
import { buildCatalog } from './manifest';

const valid = {
  package: 'pkg',
  states: [{ token: 'd.a', description: 'A', affordances: ['x'] }],
  tools: [
    {
      name: 'f',
      description: 'does f',
      parameters: [
        { name: 'x', type: 'int' },
        { name: 'y', type: 'str', default: 'hi' },
        { name: 'z', required: false },
      ],
      returns: { name: 'r', type: 'float' },
      produces: ['d.a'],
    },
    { name: 'g', description: 'does g', module: 'other.mod', requires: ['d.b', 'd.a', 'd.a'] },
  ],
};

function problems(doc: unknown, pkg?: string): string[] {
  try {
    buildCatalog(doc, 'tools.yaml', pkg);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  return [];
}

describe('tool manifest', () => {
  it('resolves modules, required/optional parameters, returns and sorted unique state tokens', () => {
    const { tools, states } = buildCatalog(valid, 'tools.yaml');
    expect(tools[0]).toMatchObject({
      id: 0,
      module: 'pkg.f',
      returns: [{ name: 'r', type: 'float', description: '' }],
    });
    expect(tools[0]?.parameters.map((p) => [p.name, p.required, p.default])).toEqual([
      ['x', true, undefined],
      ['y', false, 'hi'],
      ['z', false, null],
    ]);
    expect(tools[1]).toMatchObject({ module: 'other.mod', requires: ['d.a', 'd.b'] });
    expect(states).toEqual([{ token: 'd.a', description: 'A', affordances: ['x'] }]);
  });

  it('lets server.yaml override the default package', () => {
    expect(buildCatalog(valid, 'tools.yaml', 'override').tools[0]?.module).toBe('override.f');
  });

  it('reports every problem at once with the tool named in the path', () => {
    const found = problems(
      {
        tools: [
          { name: 'bad-name', description: 'x' },
          {
            name: 'ok',
            description: '',
            parameters: [{ name: 'p', type: 'int', required: true, default: 1 }],
            produces: ['nodot'],
          },
          { name: 'ok2', description: 'd', colour: 'red' },
        ],
      },
      'pkg',
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'tools[0] (bad-name).name: must be a Python identifier',
        'tools[1] (ok).description: describe what the tool does (agents search on it)',
        'tools[1] (ok).parameters[0] (p): a required parameter cannot have a default',
        "tools[1] (ok).produces[0]: must be a state token like 'domain.state_name'",
        expect.stringContaining('tools[2] (ok2): Unrecognized key'),
      ]),
    );
  });

  it('refuses duplicate tools and parameters and tools without a module', () => {
    expect(
      problems(
        {
          tools: [
            { name: 'a', description: 'x', parameters: [{ name: 'p' }, { name: 'p' }] },
            { name: 'a', description: 'y' },
          ],
        },
        'pkg',
      ),
    ).toEqual(["tools[0] (a): duplicate parameter 'p'", 'tools[1] (a): duplicate tool name']);
    expect(problems({ tools: [{ name: 'lonely', description: 'x' }] })[0]).toContain(
      "Tool 'lonely' has no module and the manifest has no default package",
    );
  });
});
