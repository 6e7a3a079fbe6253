import { devToken, rawToolCall } from '../../test/support/ts-clients';

/** One stateless 2026-07-28 tool call to a square as agent principal `who`; its JSON answer (throws on an error). */
export async function squareCall(
  origin: string,
  who: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const r = await rawToolCall(`${origin}/mcp`, tool, args, { token: devToken(who) });
  if (r.isError) throw new Error(`${tool} failed: ${r.text}`);
  return r.json;
}
