import { describe, expect, it } from 'vitest';
import { gatewayPolicySchema } from './gateway.config';
import { ToolPolicy } from './tool-policy';

/** A policy exactly as the gateway's config loader builds it (defaults applied, comma strings split). */
const policy = (raw: Record<string, unknown>): ToolPolicy => new ToolPolicy(gatewayPolicySchema.parse(raw));

const allowed = { allowed: true, rule: 'allowed' };

describe('ToolPolicy.decide', () => {
  it('allows every tool when nothing is configured', () => {
    const p = policy({});
    expect(p.decide('execute_demo_code', 'demo')).toEqual(allowed);
    expect(p.decide('demo_send', 'demo')).toEqual(allowed);
  });

  it('blocks a tool named by a glob and names the rule that matched', () => {
    expect(policy({ blocked_tools: ['other', 'execute_*_code'] }).decide('execute_demo_code', 'demo')).toEqual({
      allowed: false,
      rule: 'blocked_tools: execute_*_code',
      message: "Tool 'execute_demo_code' is blocked by gateway policy.",
    });
  });

  it('blocks on the whole name, never on a substring of it', () => {
    const p = policy({ blocked_tools: ['execute'] });
    expect(p.decide('execute_demo_code', 'demo')).toEqual(allowed);
  });

  it('expands a family name to the companion tools of this server only', () => {
    const p = policy({ blocked_tools: ['parallel_execute'] });
    for (const tool of ['demo_parallel_execute', 'demo_check_batch', 'demo_cancel_batch']) {
      expect(p.decide(tool, 'demo')).toMatchObject({ allowed: false, rule: 'blocked_tools: parallel_execute' });
    }
    expect(p.decide('other_parallel_execute', 'demo')).toEqual(allowed);
    expect(p.decide('demo_check_job', 'demo')).toEqual(allowed);
  });

  it('maps each family name to the reference tool names, prefix or suffix', () => {
    expect(policy({ blocked_tools: ['check_job'] }).decide('demo_check_job', 'demo').allowed).toBe(false);
    expect(policy({ blocked_tools: ['send'] }).decide('demo_send', 'demo').allowed).toBe(false);
    expect(policy({ blocked_tools: ['plan_workflow'] }).decide('plan_demo_workflow', 'demo').allowed).toBe(false);
    expect(policy({ blocked_tools: ['load_skill'] }).decide('load_demo_skill', 'demo').allowed).toBe(false);
  });

  it('reads a family name only as its family, not also as a glob on the bare name', () => {
    expect(policy({ blocked_tools: ['send'] }).decide('send', 'demo')).toEqual(allowed);
  });

  it('refuses tools outside allowed_tools and lists what is allowed', () => {
    expect(policy({ allowed_tools: ['execute_*_code', 'check_job'] }).decide('demo_send', 'demo')).toEqual({
      allowed: false,
      rule: 'allowed_tools',
      message: "Tool 'demo_send' is not allowed by gateway policy. Allowed: ['execute_*_code', 'check_job']",
    });
  });

  it('accepts allowed_tools entries as globs or family names', () => {
    const p = policy({ allowed_tools: ['execute_*_code', 'check_job'] });
    expect(p.decide('execute_demo_code', 'demo')).toEqual(allowed);
    expect(p.decide('demo_check_job', 'demo')).toEqual(allowed);
  });

  it('treats an empty allowed_tools list like no list (the reference: "when not null and non-empty")', () => {
    expect(policy({ allowed_tools: [] }).decide('demo_send', 'demo')).toEqual(allowed);
    expect(policy({ allowed_tools: '' }).decide('demo_send', 'demo')).toEqual(allowed);
  });

  it('lets blocked_tools win over allowed_tools', () => {
    const p = policy({ allowed_tools: ['*'], blocked_tools: ['send'] });
    expect(p.decide('demo_send', 'demo')).toMatchObject({ allowed: false, rule: 'blocked_tools: send' });
  });

  it('reads comma-separated env strings as lists', () => {
    const p = policy({ blocked_tools: 'send, check_job' });
    expect(p.decide('demo_send', 'demo').allowed).toBe(false);
    expect(p.decide('demo_check_job', 'demo').allowed).toBe(false);
    expect(p.decide('execute_demo_code', 'demo')).toEqual(allowed);
  });

  it('blocks nothing with an empty blocked pattern', () => {
    expect(policy({ blocked_tools: [''] }).decide('demo_send', 'demo')).toEqual(allowed);
  });
});

describe('ToolPolicy.functionPolicyHeader', () => {
  const header = (raw: Record<string, unknown>): unknown => {
    const h = policy(raw).functionPolicyHeader();
    return h && (JSON.parse(h['x-stoa-function-policy'] ?? 'null') as unknown);
  };

  it('sends no header when no function policy is configured', () => {
    expect(policy({ blocked_tools: ['send'] }).functionPolicyHeader()).toBeUndefined();
  });

  it('sends blocked functions alone when no allow list is set', () => {
    expect(header({ blocked_functions: ['delete_*'] })).toEqual({ blocked: ['delete_*'] });
  });

  it('sends the allow list with an empty block list', () => {
    expect(header({ allowed_functions: ['buffer', 'area_*'] })).toEqual({ allowed: ['buffer', 'area_*'], blocked: [] });
  });

  it('sends an empty allow list as is, which the kernel reads as "no function allowed"', () => {
    expect(header({ allowed_functions: [] })).toEqual({ allowed: [], blocked: [] });
  });
});
