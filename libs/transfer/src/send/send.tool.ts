import { z } from 'zod';
import { defineTool, ToolFailure, type ToolDefinition } from '@stoa/mcp';
import type { SendService } from './send.service';

/**
 * The generated description of `{name}_send` (reference §1.9): destinations, data_ref forms, one example each.
 * Storage and server wording only where such destinations are configured (the parameters follow the same rule).
 */
export function sendDescription(server: string, send: SendService, ttlSeconds: number): string {
  const names = send.destinationNames();
  const kinds = send.destinationKinds();
  const storage = kinds.has('local') || kinds.has('blob');
  const custom = new Map(send.customDestinations().map((p) => [p.name, p.description]));
  const examples = names.map((n) => {
    if (custom.has(n))
      return `- ${server}_send(data_ref='result', to='${n}') → ${custom.get(n) ?? `sent to ${n}`} (a kernel variable is serialised, a file is sent as it is)`;
    if (n === 'user')
      return `- ${server}_send(data_ref='report.csv', to='user') → a download link for the user (expires after ${Math.round(ttlSeconds / 60)} min)`;
    if (n === 'local')
      return `- ${server}_send(data_ref='df', to='local', path='exports/df.pkl') → copied under the server's export directory, in a folder for this session`;
    if (n === 'blob')
      return `- ${server}_send(data_ref='plot.png', to='blob') → uploaded to blob storage as {session_id}/plot.png`;
    return `- ${server}_send(data_ref='result', to='${n}', name='result', session_id='<their session>') → the variable appears in the ${n} server's kernel`;
  });
  const targets = [
    'to the user (download link)',
    storage && 'to storage',
    kinds.has('peer') && "into another server's kernel",
    custom.size > 0 && `to ${[...custom.keys()].join(', ')}`,
  ];
  return [
    `Send data out of this ${server} session: ${targets.filter(Boolean).join(', ')}.`,
    `Available destinations: ${names.map((n) => `'${n}'`).join(', ')}.`,
    `data_ref is a kernel variable name (serialised inside the kernel with pickle, or dill/cloudpickle when installed) or the name of a file in AGORA_OUTPUT_DIR (as listed in a result's artifacts). 'user' needs a file${kinds.has('peer') ? '; server destinations need a variable' : ''}.`,
    'Examples:',
    ...examples,
    'Returns JSON {success, data_ref, destination, name, remote_uri, transfer_id, size_bytes} or {success: false, error}.',
  ].join('\n');
}

const optionalText = (description: string) => z.string().nullable().default(null).describe(description);

/**
 * `{name}_send(data_ref, to, name, path, session_id)` (+ execution_session_id for stateless clients). `path` is
 * listed only with a storage destination and `session_id` only with a server one; a reference client that sends
 * them anyway is still accepted (unknown arguments are dropped, as for every tool).
 */
export function sendTool(server: string, send: SendService, ttlSeconds: number): ToolDefinition {
  const kinds = send.destinationKinds();
  return defineTool({
    name: `${server}_send`,
    description: sendDescription(server, send, ttlSeconds),
    input: z
      .object({
        data_ref: z.string().describe('Kernel variable name, or a file name in AGORA_OUTPUT_DIR'),
        to: z
          .string()
          .default('user')
          .describe(`Destination: ${send.destinationNames().join(', ')}`),
        name: optionalText('Target name (variable on a peer, file name otherwise); default data_ref'),
        path: optionalText('Relative target path for local/blob; default name'),
        session_id: optionalText('The target session on the peer; default your oldest session there'),
        execution_session_id: optionalText(
          "Your session here (an execute result's session_id); default this connection's or your latest",
        ),
      })
      .omit({
        ...(kinds.has('local') || kinds.has('blob') || kinds.has('custom') ? {} : { path: true }),
        ...(kinds.has('peer') ? {} : { session_id: true }),
      }),
    annotations: { title: `Send data from the ${server} kernel`, destructiveHint: false, openWorldHint: true },
    handler: async (args, ctx) => {
      const result = await send.send(ctx.principal, args, ctx.transportSessionId);
      return result.success ? result : new ToolFailure(result);
    },
  });
}
