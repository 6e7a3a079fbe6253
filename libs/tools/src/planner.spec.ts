import { describe, expect, it } from 'vitest';
import { StateGraph } from './planner';
import type { DomainCatalog, ToolDef } from './tools.types';

const t = (name: string, requires: string[], produces: string[]): ToolDef => ({
  id: 0,
  name,
  description: `${name} tool`,
  parameters: [],
  returns: [],
  module: 'm',
  requires,
  produces,
  affordances: [],
});
const catalog: DomainCatalog = {
  serverName: 'chem',
  states: [{ token: 'chem.parsed', description: 'Molecule parsed', affordances: ['inspect atoms'] }],
  tools: [
    t('parse', [], ['chem.parsed']),
    t('embed', ['chem.parsed'], ['chem.embedded']),
    t('optimise', ['chem.embedded'], ['chem.optimised']),
    t('dock', ['chem.optimised'], ['chem.docked']),
    t('report', ['chem.lonely'], []),
    t('plain', [], []),
  ],
  skills: [
    {
      name: 'conformers',
      description: 'make conformers',
      domain: 'chem',
      states: ['chem.parsed', 'chem.embedded'],
      content: '',
      path: '',
    },
  ],
};
const g = new StateGraph([catalog], 'execute_chem_code', [
  { from_state: 'chem.docked', to_state: 'geo.site', description: 'site of the docked pose' },
]);

describe('StateGraph', () => {
  it('overview: states with labels, start edges, skills and bridges', () => {
    const o = g.overview('chem') as {
      domains: { states: Record<string, string>; edges: unknown[]; skills: unknown[] }[];
      bridges: unknown[];
    };
    expect(o.domains[0]?.states['chem.parsed']).toBe('Molecule parsed');
    expect(o.domains[0]?.states['chem.embedded']).toBe('EMBEDDED');
    expect(o.domains[0]?.edges).toContainEqual({ from: '(start)', to: 'chem.parsed', tool: 'parse' });
    expect(o.domains[0]?.skills).toEqual([
      { name: 'conformers', description: 'make conformers', states: ['chem.parsed', 'chem.embedded'] },
    ]);
    expect(o.bridges).toEqual([{ from: 'chem.docked', to: 'geo.site', description: 'site of the docked pose' }]);
  });

  it('overview of an unknown domain lists the known ones with a hint', () => {
    expect(g.overview('bio')).toMatchObject({
      message: "No state graph found for domain 'bio'.",
      available_domains: ['chem', 'geo'],
      hint: expect.stringContaining('execute_chem_code'),
    });
  });

  it('next_steps: tools leaving a state, next states, producers and skills', () => {
    const n = g.nextSteps('chem.parsed');
    expect((n.tools_from_here as { name: string }[]).map((x) => x.name)).toEqual(['embed']);
    expect(n.next_states).toEqual(['chem.embedded']);
    expect((n.tools_that_produce_this_state as { name: string }[])[0]?.name).toBe('parse');
    expect(n.affordances).toEqual(['inspect atoms']);
    expect(n.relevant_skills).toHaveLength(1);
    expect(g.nextSteps('chem.optimised').hint).toBeUndefined();
    expect(g.nextSteps('geo.site').hint).toBe(
      "No annotated tools transition from 'geo.site'. You can always use execute_chem_code to work directly in the environment.",
    );
    expect(g.nextSteps('')).toEqual({ error: "Provide a 'current_state' parameter (e.g. 'domain.state_name')." });
  });

  it('path: shortest sequence including a bridge; same state; unreachable; missing args', () => {
    const p = g.path('chem.parsed', 'geo.site') as { path: { tool: string; server: string }[] };
    expect(p.path.map((s) => s.tool)).toEqual(['embed', 'optimise', 'dock', 'bridge:chem.docked→geo.site']);
    expect(p.path[3]?.server).toBe('(bridge)');
    expect(g.path('chem.docked', 'chem.docked')).toEqual({ source: 'chem.docked', target: 'chem.docked', path: [] });
    expect(g.path('chem.optimised', 'chem.parsed')).toMatchObject({
      path: null,
      hint: expect.stringContaining("No annotated tool path from 'chem.optimised' to 'chem.parsed'"),
    });
    expect(g.path('chem.parsed', '')).toEqual({
      error: "Provide both 'current_state' (source) and 'target_state' parameters.",
    });
  });

  it('tool: summary, unknown tool, unannotated tool', () => {
    expect(g.tool('dock')).toEqual({
      name: 'dock',
      server: 'chem',
      description: 'dock tool',
      requires: ['chem.optimised'],
      produces: ['chem.docked'],
    });
    expect(g.tool('plain')).toMatchObject({ error: "Tool 'plain' not found in the state graph." });
    expect(g.tool('')).toEqual({ error: "Provide a 'tool_name' parameter." });
  });

  it('is not annotated without state transitions', () => {
    expect(new StateGraph([{ ...catalog, tools: [t('plain', [], [])], skills: [] }], 'x').annotated).toBe(false);
  });
});
