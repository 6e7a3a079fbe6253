import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogJson, loadDomain, skillsConfigSchema, toolsConfigSchema } from '@stoa/tools';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { ROOT } from '../../../test/support/paths';
import { pyCalls } from '../../../test/support/py-client';
import { v2Client } from '../../../test/support/ts-clients';

const SCIENCE = join(ROOT, 'examples', 'servers', 'science');
const scienceConfig = {
  name: 'science',
  tools: { manifest: join(SCIENCE, 'tools.yaml') },
  skills: { dir: join(SCIENCE, 'skills') },
};

describe('science executor: search, skills, planning and tools through MCP', () => {
  let ex: RunningExecutor;
  beforeAll(async () => {
    ex = await startExecutor({ config: scienceConfig });
  });
  afterAll(async () => {
    await ex.stop();
  });

  it('a Python agent searches, loads a skill, plans a path and runs it end to end', async () => {
    const r = await pyCalls(
      ex.mcpUrl,
      'auto',
      [
        {
          tool: 'search_science_tools',
          args: { query: 'which nodes are the most influential hubs in my network', top: 3 },
        },
        { tool: 'load_science_skill', args: { skill_name: 'network-analysis' } },
        {
          tool: 'plan_science_workflow',
          args: { mode: 'path', current_state: 'science.graph_built', target_state: 'science.communities_found' },
        },
        {
          tool: 'execute_science_code',
          args: {
            code: [
              "edges = [['a','b'],['b','c'],['a','c'],['c','d'],['d','e'],['e','f'],['d','f'],['f','g']]",
              'g = build_graph(edges)',
              "hubs = centrality(g, kind='betweenness', top=2)",
              'parts = detect_communities(g)',
              "print(hubs['ranking'][0][0], parts['count'])",
            ].join('\n'),
          },
        },
      ],
      { listTools: true },
    );
    expect(r[0]?.json.tools).toEqual(
      expect.arrayContaining(['search_science_tools', 'load_science_skill', 'plan_science_workflow']),
    );
    expect((r[1]?.json.tools as { name: string }[]).map((t) => t.name)).toContain('centrality');
    expect((r[1]?.json.skills as { name: string }[]).map((s) => s.name)).toContain('network-analysis');
    expect(r[2]?.text).toMatch(/^---\nname: network-analysis/);
    expect(r[3]?.json.path).toEqual([
      {
        tool: 'detect_communities',
        server: 'science',
        from_state: 'science.graph_built',
        to_state: 'science.communities_found',
      },
    ]);
    const run = r[4]?.json as {
      stdout: string;
      success: boolean;
      tool_calls: { tool_name: string; args: Record<string, unknown> }[];
    };
    expect(run.success).toBe(true);
    expect(run.stdout).toBe('d 2\n');
    expect(run.tool_calls.map((c) => c.tool_name)).toEqual(['build_graph', 'centrality', 'detect_communities']);
    expect(run.tool_calls[1]?.args).toEqual({ graph: '<Graph@1>', kind: 'betweenness', top: 2 });
  });

  it('runs the regression skill workflow with numpy arrays passed between tools', async () => {
    const c = await v2Client(ex.mcpUrl, 'auto');
    const r = await c.call('execute_science_code', {
      code: 'd = make_dataset([1, 2, 3, 4, 5], [2.1, 3.9, 6.2, 8.1, 9.8])\ns = describe_stats(d["y"])\nfit = linear_fit(d["x"], d["y"])\nround(fit["slope"], 2), fit["r_squared"] > 0.99',
    });
    await c.close();
    expect(r.json.stdout).toBe('(1.96, True)\n');
    expect((r.json.tool_calls as { tool_name: string }[]).map((t) => t.tool_name)).toEqual([
      'make_dataset',
      'describe_stats',
      'linear_fit',
    ]);
  });

  it('lists every tool function in the execute description', async () => {
    const c = await v2Client(ex.mcpUrl, 'auto');
    const description = await c.describeTool('execute_science_code');
    await c.close();
    expect(description).toContain('Available tool functions (call directly in your code):');
    expect(description).toContain(
      '  - shortest_path(graph: Graph, source: str, target: str, weighted: bool = True): Shortest path between two nodes',
    );
    expect(description).toContain('Call list_tools() in your code for full signatures and documentation.');
  });

  it('serves /catalog publicly, equal to the manifest it was built from, with the MCP tool schemas for connectors', async () => {
    const { mcp_tools: mcpTools, ...body } = (await (await fetch(`${ex.url}/catalog`)).json()) as {
      mcp_tools: { name: string; inputSchema: { properties: Record<string, unknown> } }[];
      tools: unknown[];
    };
    const expected = catalogJson(
      loadDomain(
        'science',
        toolsConfigSchema.parse(scienceConfig.tools),
        skillsConfigSchema.parse(scienceConfig.skills),
        ROOT,
      ).catalog,
    );
    expect(body).toEqual(expected);
    expect(body.tools.length).toBeGreaterThanOrEqual(8);
    const c = await v2Client(ex.mcpUrl, 'auto');
    expect(mcpTools.map((t) => t.name).sort()).toEqual((await c.listTools()).sort());
    await c.close();
    expect(Object.keys(mcpTools.find((t) => t.name === 'execute_science_code')!.inputSchema.properties)).toContain(
      'execution_session_id',
    );
  });

  it('answers bad input with the reference messages', async () => {
    const c = await v2Client(ex.mcpUrl, 'auto');
    expect((await c.call('search_science_tools', { query: 'x', category: 'widgets' })).json).toEqual({
      error: "Invalid category 'widgets'. Must be 'all', 'tools', or 'skills'.",
    });
    expect((await c.call('search_science_tools', { query: 'zzqqxx' })).json.hint).toBe(
      "No tools or skills matched 'zzqqxx'. Broaden or rephrase the query, or pass an empty string with top=999 to list the full catalog.",
    );
    expect((await c.call('load_science_skill', { skill_name: 'nope' })).json).toEqual({
      error: "Skill 'nope' not found.",
      available_skills: ['ab-testing', 'network-analysis', 'regression-analysis', 'route-planning'],
    });
    expect((await c.call('plan_science_workflow', { mode: 'dream' })).json).toEqual({
      error: "Unknown mode 'dream'. Use: overview, next_steps, path, tool.",
    });
    await c.close();
  });
});

describe('tools appear and disappear with config', () => {
  it('registers search and load_skill but not plan when only skills exist', async () => {
    const ex = await startExecutor({ config: { name: 'science', skills: { dir: join(SCIENCE, 'skills') } } });
    try {
      const c = await v2Client(ex.mcpUrl, 'auto');
      const tools = await c.listTools();
      await c.close();
      expect(tools).toEqual(expect.arrayContaining(['search_science_tools', 'load_science_skill']));
      expect(tools).not.toContain('plan_science_workflow');
    } finally {
      await ex.stop();
    }
  });

  it('registers the full demo surface from examples/servers/demo', async () => {
    const demo = join(ROOT, 'examples', 'servers', 'demo');
    const ex = await startExecutor({
      config: { tools: { manifest: join(demo, 'tools.yaml') }, skills: { dir: join(demo, 'skills') } },
    });
    try {
      const c = await v2Client(ex.mcpUrl, 'auto');
      const tools = await c.listTools();
      const r = await c.call('execute_demo_code', { code: "word_count('a b a')['top'][0]" });
      await c.close();
      expect(tools.sort()).toEqual([
        'demo_cancel_batch',
        'demo_check_batch',
        'demo_check_job',
        'demo_close_session',
        'demo_get_session_info',
        'demo_inspect_session',
        'demo_list_sessions',
        'demo_parallel_execute',
        'demo_send',
        'execute_demo_code',
        'load_demo_skill',
        'plan_demo_workflow',
        'search_demo_tools',
      ]);
      expect(r.json.stdout).toBe("('a', 2)\n");
    } finally {
      await ex.stop();
    }
  });

  it('refuses to start on an invalid manifest, naming the bad keys', async () => {
    await expect(
      startExecutor({ config: { tools: { inline: { package: 'p', tools: [{ name: 'x y', description: '' }] } } } }),
    ).rejects.toThrow(
      /tools\[0\] \(x y\)\.name: must be a Python identifier[\s\S]*description: describe what the tool does/,
    );
  });
});
