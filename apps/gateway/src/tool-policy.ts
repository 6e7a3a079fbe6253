import { exposed } from '@stoa/connectors';
import type { GatewayPolicy } from './gateway.config';

/** The reference's companion families: a bare family name in blocked_tools suppresses these tools. */
const FAMILIES: Record<string, (server: string) => string[]> = {
  check_job: (u) => [`${u}_check_job`],
  parallel_execute: (u) => [`${u}_parallel_execute`, `${u}_check_batch`, `${u}_cancel_batch`],
  send: (u) => [`${u}_send`],
  plan_workflow: (u) => [`plan_${u}_workflow`],
  load_skill: (u) => [`load_${u}_skill`],
};

export type ToolDecision = { allowed: true; rule: 'allowed' } | { allowed: false; rule: string; message: string };

/**
 * Allow/deny by MCP tool name (globs), never by searching the submitted code: a cell that merely mentions
 * "send" is not blocked (the reference's substring check did that).
 */
export class ToolPolicy {
  constructor(private readonly policy: GatewayPolicy) {}

  decide(tool: string, server: string): ToolDecision {
    for (const pattern of this.policy.blocked_tools) {
      const names = FAMILIES[pattern]?.(server);
      if (names ? names.includes(tool) : exposed(tool, [pattern])) {
        return {
          allowed: false,
          rule: `blocked_tools: ${pattern}`,
          message: `Tool '${tool}' is blocked by gateway policy.`,
        };
      }
    }
    const allowed = this.policy.allowed_tools;
    if (
      allowed &&
      allowed.length &&
      !allowed.some((p) => (FAMILIES[p]?.(server) ?? []).includes(tool) || exposed(tool, [p]))
    ) {
      return {
        allowed: false,
        rule: 'allowed_tools',
        message: `Tool '${tool}' is not allowed by gateway policy. Allowed: [${allowed.map((a) => `'${a}'`).join(', ')}]`,
      };
    }
    return { allowed: true, rule: 'allowed' };
  }

  /** The header executors read to enforce the domain-function policy in their kernels (undefined = no policy). */
  functionPolicyHeader(): Record<string, string> | undefined {
    const { allowed_functions: allowed, blocked_functions: blocked } = this.policy;
    if (allowed === null && !blocked.length) return undefined;
    return { 'x-stoa-function-policy': JSON.stringify({ ...(allowed ? { allowed } : {}), blocked }) };
  }
}
