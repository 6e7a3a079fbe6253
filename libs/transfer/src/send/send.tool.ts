import { z } from 'zod';
import { defineTool, ToolFailure, type ToolDefinition } from '@stoa/mcp';
import type { SendService } from './send.service';

/** The generated description of `{name}_send` (reference §1.9): destinations, data_ref forms, one example each. */
export function sendDescription(server: string, send: SendService, ttlSeconds: number): string {
  const names = send.destinationNames();
  const examples = names.map((n) => {
    if (n === 'user')
      return `- ${server}_send(data_ref='report.csv', to='user') → a download link for the user (expires after ${Math.round(ttlSeconds / 60)} min)`;
    if (n === 'local')
      return `- ${server}_send(data_ref='df', to='local', path='exports/df.pkl') → copied under the server's export directory, in a folder for this session`;
    if (n === 'blob')
      return `- ${server}_send(data_ref='plot.png', to='blob') → uploaded to blob storage as {session_id}/plot.png`;
    return `- ${server}_send(data_ref='result', to='${n}', name='result', session_id='<their session>') → the variable appears in the ${n} server's kernel`;
  });
  return [
    `Send data out of this ${server} session: to the user (download link), to storage, or into another server's kernel.`,
    `Available destinations: ${names.map((n) => `'${n}'`).join(', ')}.`,
    "data_ref is a kernel variable name (serialised inside the kernel with pickle, or dill/cloudpickle when installed) or the name of a file in AGORA_OUTPUT_DIR (as listed in a result's artifacts). 'user' needs a file; server destinations need a variable.",
    'Examples:',
    ...examples,
    "Parameters: data_ref (variable or output file), to (destination), name (target name; default data_ref), path (file destinations: relative target path; default name), session_id (server destinations: the target session on the peer; default: your oldest session there), execution_session_id (your session here; default: the MCP connection's or your most recent).",
    'Returns JSON {success, data_ref, destination, name, remote_uri, transfer_id, size_bytes} or {success: false, error}.',
  ].join('\n');
}

/** `{name}_send(data_ref, to, name, path, session_id)` (+ execution_session_id for stateless clients). */
export function sendTool(server: string, send: SendService, ttlSeconds: number): ToolDefinition {
  return defineTool({
    name: `${server}_send`,
    description: sendDescription(server, send, ttlSeconds),
    input: z.object({
      data_ref: z.string().describe('Kernel variable name, or a file name in AGORA_OUTPUT_DIR'),
      to: z
        .string()
        .default('user')
        .describe(`Destination: ${send.destinationNames().join(', ')}`),
      name: z
        .string()
        .nullable()
        .default(null)
        .describe('Target name (variable on a peer, file name otherwise); default data_ref'),
      path: z.string().nullable().default(null).describe('Relative target path for local/blob; default name'),
      session_id: z
        .string()
        .nullable()
        .default(null)
        .describe('Server destinations: the target session id on the peer'),
      execution_session_id: z
        .string()
        .nullable()
        .default(null)
        .describe('Your session here (session_id of an execute result)'),
    }),
    annotations: { title: `Send data from the ${server} kernel`, destructiveHint: false, openWorldHint: true },
    handler: async (args, ctx) => {
      const result = await send.send(ctx.principal, args, ctx.transportSessionId);
      return result.success ? result : new ToolFailure(result);
    },
  });
}
