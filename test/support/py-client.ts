import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, TEST_PYTHON } from './paths';

/** A tool call, or another request (`op`): resources/*, prompts/list, prompts/get, completion/complete, any method. */
export type PyCall =
  | { tool: string; args?: Record<string, unknown> }
  | {
      op:
        | 'list_resources'
        | 'list_resource_templates'
        | 'read_resource'
        | 'list_prompts'
        | 'get_prompt'
        | 'complete'
        | 'request';
      uri?: string;
      /** get_prompt: the prompt and its arguments. */
      name?: string;
      arguments?: Record<string, string>;
      /** complete: what to complete (`{type: 'ref/prompt', name}` or `{type: 'ref/resource', uri}`) and the argument. */
      ref?: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
      argument?: { name: string; value: string };
      method?: string;
      params?: Record<string, unknown>;
    };
export interface PyResult {
  text: string;
  is_error: boolean;
  /** A tool result's JSON text; an op's MCP result, or `{error: {code, message}}`. */
  json: Record<string, unknown> & { session_id?: string };
  /** A tool result's resource_link contents. */
  links?: { uri: string; name: string; mimeType?: string; size?: number }[];
}

/** Runs calls through the real Python `mcp` 2.3 client over one connection. */
export async function pyCalls(
  url: string,
  mode: 'auto' | 'legacy',
  calls: PyCall[],
  opts: { token?: string; listTools?: boolean; headers?: Record<string, string> } = {},
): Promise<PyResult[]> {
  const plan = { url, mode, token: opts.token, headers: opts.headers, calls, list_tools: opts.listTools };
  return runPyClient<PyResult[]>('py_mcp_client.py', plan, 'python mcp client');
}

/** Runs a Python client script (of test/clients, or of `dir`) with `plan` as JSON on stdin; its stdout parsed as JSON. */
export function runPyClient<T>(
  script: string,
  plan: unknown,
  label: string,
  dir = join(ROOT, 'test', 'clients'),
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(TEST_PYTHON, [join(dir, script)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${label} exited ${code}: ${err.slice(-3000)}`));
      resolve(JSON.parse(out) as T);
    });
    child.stdin.end(JSON.stringify(plan));
  });
}
