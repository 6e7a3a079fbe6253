import { describe, expect, it } from 'vitest';
import { ToolFailure } from '@stoa/mcp';
import { searchInputSchema, ToolSearch, toolAffordances } from './search';
import type { DomainCatalog, ToolDef } from './tools.types';

const tool = (id: number, name: string, description: string, extra: Partial<ToolDef> = {}): ToolDef => ({
  id,
  name,
  description,
  parameters: [],
  returns: [],
  module: `m.${name}`,
  requires: [],
  produces: [],
  affordances: [],
  ...extra,
});

const catalog: DomainCatalog = {
  serverName: 'geo',
  states: [{ token: 'geo.routed', description: 'a route', affordances: ['navigate between cities'] }],
  tools: [
    tool(0, 'shortest_path', 'Shortest path between two nodes of a graph', {
      produces: ['geo.routed'],
      requires: ['geo.graph'],
    }),
    tool(1, 'buffer_polygon', 'Grow a polygon by a distance', { affordances: ['expand a shape'] }),
    tool(2, 'read_shapefile', 'Load vector features from a shapefile'),
  ],
  skills: [
    {
      name: 'routing-basics',
      description: 'How to plan a route',
      domain: 'geo',
      states: ['geo.routed'],
      content: '---\nname: routing-basics\n---\n',
      path: '/x.md',
    },
  ],
};
const search = new ToolSearch(catalog, 'execute_geo_code', 'load_geo_skill');

/** A hit's kind, name and how to reach it, as one line: `type/execution_type name → to_access`. */
const reach = (h?: { name: string; type: string; execution_type: string; to_access: string }) =>
  h && `${h.type}/${h.execution_type} ${h.name} → ${h.to_access}`;

describe('ToolSearch', () => {
  it('ranks by BM25 over name, description and the affordances of produced states', () => {
    const r = search.search('navigate between cities', 5, 'tools');
    expect(reach(r.tools[0])).toBe('tool/mcp shortest_path → Call via execute_geo_code');
    expect(r.tools[0]).toMatchObject({ state_requires: ['geo.graph'], state_produces: ['geo.routed'] });
    expect(r.tools[0]?.score).toBeGreaterThan(0);
    expect(r.skills).toEqual([]);
  });

  it('matches snake_case names from plain words and inflections', () => {
    expect(search.search('read shapefiles', 3, 'tools').tools[0]?.name).toBe('read_shapefile');
    expect(search.search('expanding shapes', 3, 'tools').tools[0]?.name).toBe('buffer_polygon');
  });

  it('returns skills with a load hint and respects categories', () => {
    const r = search.search('plan a route', 5, 'all');
    expect(reach(r.skills[0])).toBe(
      'skill/skill routing-basics → Load with load_geo_skill(skill_name="routing-basics")',
    );
    expect(r.skills[0]).toMatchObject({ state_requires: [], state_produces: [] });
    expect(search.search('plan a route', 5, 'skills').tools).toEqual([]);
  });

  it('lists the catalogue in order for an empty query, with score 0', () => {
    const r = search.search('  ', 2, 'all');
    expect(r.tools.map((t) => [t.name, t.score])).toEqual([
      ['shortest_path', 0],
      ['buffer_polygon', 0],
    ]);
    expect(r.skills).toHaveLength(1);
  });

  it('returns nothing for an unrelated query', () => {
    expect(search.search('quantum chromodynamics', 5, 'all')).toEqual({ tools: [], skills: [] });
  });

  it('puts state affordances before the tool’s own and drops duplicates case-insensitively', () => {
    const t = tool(9, 'x', 'y', { produces: ['geo.routed'], affordances: ['Navigate between cities ', 'other'] });
    expect(toolAffordances(t, catalog.states)).toEqual(['navigate between cities', 'other']);
  });
});

describe('ToolSearch limits', () => {
  const args = (query: string) => searchInputSchema.parse({ query });
  const timed = <T>(fn: () => T) => {
    const t0 = performance.now();
    const out = fn();
    return { out, ms: performance.now() - t0 };
  };

  it('refuses a query over max_query_chars at once, naming the limit and the key, without echoing it', () => {
    const { out, ms } = timed(() => search.answer(args('q'.repeat(1_048_576)), 'none'));
    expect(out).toBeInstanceOf(ToolFailure);
    const body = (out as ToolFailure).body;
    expect(body.error).toBe(
      "Query too long: 1048576 characters, the limit is 1000 (search.max_query_chars). Describe what you want to do in a few words, e.g. 'shortest path in a weighted graph'.",
    );
    expect(body).toMatchObject({ tools: [], skills: [] });
    expect(ms).toBeLessThan(50);
  });

  it('refuses a word over max_term_chars, echoing only its first characters', () => {
    const out = search.answer(args(`shortest ${'x'.repeat(65)} path`), 'none') as ToolFailure;
    expect(out.body.error).toBe(
      `Query word '${'x'.repeat(24)}…' is 65 characters long, the limit is 64 (search.max_term_chars). Search with ordinary words that describe the task.`,
    );
  });

  it('takes its limits from config', () => {
    const strict = new ToolSearch(catalog, 'execute_geo_code', 'load_geo_skill', {
      max_query_chars: 10,
      max_term_chars: 5,
    });
    expect((strict.answer(args('navigate between'), 'none') as ToolFailure).body.error).toContain(
      'the limit is 10 (search.max_query_chars)',
    );
    expect((strict.answer(args('navigate'), 'none') as ToolFailure).body.error).toContain(
      'the limit is 5 (search.max_term_chars)',
    );
    expect(strict.answer(args('route'), 'none')).not.toBeInstanceOf(ToolFailure);
  });

  it('searches a 32k-character word in linear time when the limits allow it (it took 10 s before)', () => {
    const open = new ToolSearch(catalog, 'execute_geo_code', 'load_geo_skill', {
      max_query_chars: 1 << 20,
      max_term_chars: 1 << 20,
    });
    const { out, ms } = timed(() => open.answer(args('q'.repeat(32_768)), 'none'));
    expect(out).toMatchObject({ tools: [], skills: [], hint: 'none' });
    expect(ms).toBeLessThan(200);
  });

  it('searches snake_case identifiers inside a long word-run in linear time', () => {
    const open = new ToolSearch(catalog, 'execute_geo_code', 'load_geo_skill', {
      max_query_chars: 1 << 20,
      max_term_chars: 1 << 20,
    });
    const { out, ms } = timed(() => open.search(`${'a'.repeat(32_768)} read_shapefile`, 5, 'tools'));
    expect(out.tools[0]?.name).toBe('read_shapefile');
    expect(ms).toBeLessThan(200);
  });

  it('refuses top below 1 in the schema instead of answering that nothing matched', () => {
    const r = searchInputSchema.safeParse({ query: 'route', top: 0 });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toBe(
      'top must be at least 1 (results per category); omit it for 5, or pass 999 to list everything',
    );
  });

  it('answers an invalid category as a ToolFailure with the reference message', () => {
    const out = search.answer(searchInputSchema.parse({ query: 'route', category: 'both' }), 'none') as ToolFailure;
    expect(out.body).toEqual({ error: "Invalid category 'both'. Must be 'all', 'tools', or 'skills'." });
  });
});
