import { describe, expect, it } from 'vitest';
import { ToolSearch, toolAffordances } from './search';
import type { DomainCatalog, ToolDef } from './tools.types';

const tool = (id: number, name: string, description: string, extra: Partial<ToolDef> = {}): ToolDef => ({
  id, name, description, parameters: [], returns: [], module: `m.${name}`, requires: [], produces: [], affordances: [], ...extra,
});

const catalog: DomainCatalog = {
  serverName: 'geo',
  states: [{ token: 'geo.routed', description: 'a route', affordances: ['navigate between cities'] }],
  tools: [
    tool(0, 'shortest_path', 'Shortest path between two nodes of a graph', { produces: ['geo.routed'], requires: ['geo.graph'] }),
    tool(1, 'buffer_polygon', 'Grow a polygon by a distance', { affordances: ['expand a shape'] }),
    tool(2, 'read_shapefile', 'Load vector features from a shapefile'),
  ],
  skills: [{ name: 'routing-basics', description: 'How to plan a route', domain: 'geo', states: ['geo.routed'], content: '---\nname: routing-basics\n---\n', path: '/x.md' }],
};
const search = new ToolSearch(catalog, 'execute_geo_code', 'load_geo_skill');

describe('ToolSearch', () => {
  it('ranks by BM25 over name, description and the affordances of produced states', () => {
    const r = search.search('navigate between cities', 5, 'tools');
    expect(r.tools[0]).toMatchObject({ name: 'shortest_path', type: 'tool', execution_type: 'mcp', to_access: 'Call via execute_geo_code', state_requires: ['geo.graph'], state_produces: ['geo.routed'] });
    expect(r.tools[0]?.score).toBeGreaterThan(0);
    expect(r.skills).toEqual([]);
  });

  it('matches snake_case names from plain words and inflections', () => {
    expect(search.search('read shapefiles', 3, 'tools').tools[0]?.name).toBe('read_shapefile');
    expect(search.search('expanding shapes', 3, 'tools').tools[0]?.name).toBe('buffer_polygon');
  });

  it('returns skills with a load hint and respects categories', () => {
    const r = search.search('plan a route', 5, 'all');
    expect(r.skills[0]).toMatchObject({ name: 'routing-basics', type: 'skill', execution_type: 'skill', to_access: 'Load with load_geo_skill(skill_name="routing-basics")', state_requires: [], state_produces: [] });
    expect(search.search('plan a route', 5, 'skills').tools).toEqual([]);
  });

  it('lists the catalogue in order for an empty query, with score 0', () => {
    const r = search.search('  ', 2, 'all');
    expect(r.tools.map((t) => [t.name, t.score])).toEqual([['shortest_path', 0], ['buffer_polygon', 0]]);
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
