import { z } from 'zod';

/**
 * The host's side of the kernel's reply pipe. Every byte on it is untrusted: lines are bounded, each line is
 * parsed and checked by shape, and anything else is a protocol fault (the kernel is stopped, the cell says why).
 * The kernel's supervisor (stoa_supervisor.py) frames the lines; user code cannot write on this pipe.
 */

/** Longest reply line accepted: the driver's own limit (16 MiB) plus the supervisor's framing. */
export const MAX_REPLY_LINE_BYTES = 18 * 1024 * 1024;

const display = z.object({
  mime_type: z.enum(['image/png', 'image/svg+xml']),
  data: z.string(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});

const toolCall = z.object({
  tool_name: z.string(),
  args: z.record(z.string(), z.unknown()),
  result: z.unknown(),
  duration_ms: z.number(),
  success: z.boolean(),
  error: z.string().nullable(),
  timestamp: z.number(),
});

/** What the driver answers to one command (the fields each op uses; absent ones take their defaults). */
const replyBody = z.object({
  ok: z.boolean(),
  error: z.string().nullish(),
  rejected: z.boolean().optional(),
  value: z.unknown().optional(),
  displays: z.array(display).max(10_000).default([]),
  tool_calls: z.array(toolCall).max(100).default([]),
  tool_calls_dropped: z.record(z.string(), z.number().int().nonnegative()).default({}),
  stashed: z.array(z.string().max(200)).max(10_000).default([]),
});
export type DriverReply = z.output<typeof replyBody>;

const frame = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('result'), id: z.number().int().positive(), reply: replyBody }),
  z.object({ type: z.literal('fault'), reason: z.string() }),
]);
export type DriverFrame = z.output<typeof frame>;

/** One reply line as a frame, or why it is not one (a protocol fault). */
export function parseFrame(line: string): { frame: DriverFrame } | { fault: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { fault: 'the kernel sent a reply line that is not JSON' };
  }
  const parsed = frame.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      fault: `the kernel sent a malformed reply (${issue ? `${issue.path.join('.') || 'message'}: ${issue.message}` : 'invalid'})`,
    };
  }
  return { frame: parsed.data };
}

/**
 * Splits a byte stream into lines, holding at most `maxBytes` of an unfinished line: `onLine` gets each
 * complete line, `onOverflow` is called once (and the reader stops) when a line grows past the bound.
 */
export class BoundedLines {
  private chunks: Buffer[] = [];
  private held = 0;
  private stopped = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    let data = chunk;
    for (let at = data.indexOf(0x0a); at >= 0 && !this.stopped; at = data.indexOf(0x0a)) {
      if (this.held + at > this.maxBytes) return this.overflow();
      const line = this.chunks.length ? Buffer.concat([...this.chunks, data.subarray(0, at)]) : data.subarray(0, at);
      this.chunks = [];
      this.held = 0;
      data = data.subarray(at + 1);
      this.onLine(line.toString('utf8'));
    }
    if (this.stopped || !data.length) return;
    if (this.held + data.length > this.maxBytes) return this.overflow();
    this.chunks.push(data);
    this.held += data.length;
  }

  private overflow(): void {
    this.stopped = true;
    this.chunks = [];
    this.held = 0;
    this.onOverflow();
  }
}

/** The supervisor's line for a command that gets a reply: `<id> <nonce> <token>` (the user process answers `<token> …`). */
export function pendingLine(id: number, nonce: string, token: string): string {
  return `${id} ${nonce} ${token}\n`;
}

/** A command line for the user-code process: `<token> <json>` (`-` for a command that gets no reply). */
export function commandLine(token: string, body: Record<string, unknown>): string {
  return `${token} ${JSON.stringify(body)}\n`;
}
