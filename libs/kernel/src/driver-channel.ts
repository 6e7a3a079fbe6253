import { Ajv } from 'ajv';
import type { CapturedValue, KernelDisplay, ToolCallRecord } from './kernel.types';

/**
 * The host's side of the kernel's reply pipe. Every byte on it is untrusted: frames are bounded, each result is
 * parsed and checked by shape, and anything else is a protocol fault (the kernel is stopped, the cell says why).
 * The kernel's supervisor (stoa_supervisor.py) is its only writer; user code cannot write on this pipe.
 */

/** Longest frame accepted: the driver's own reply limit (16 MiB) plus the supervisor's framing. */
export const MAX_FRAME_BYTES = 18 * 1024 * 1024;

/** Frame kinds: output of the user process's fd 1 or 2, a result, ready, a fault. */
export const FrameKind = { stdout: 0x6f, stderr: 0x65, result: 0x72, ready: 0x52, fault: 0x66 } as const;
const KINDS = new Set<number>(Object.values(FrameKind));
const HEADER_BYTES = 5;

/** What the driver answers to one command (the fields each op uses; absent ones take their defaults). */
export interface DriverReply {
  ok: boolean;
  error?: string | null;
  rejected?: boolean;
  value?: unknown;
  displays: KernelDisplay[];
  tool_calls: ToolCallRecord[];
  tool_calls_dropped: Record<string, number>;
  stashed: string[];
  /** The trailing expression's text (`repr(value)` and a newline): the last of the cell's stdout. */
  echo?: string | null;
  /** The variable a command asked to capture (`{kind: 'missing'}` when it does not exist). */
  captured?: { kind: string; value?: unknown };
}

const replySchema = {
  type: 'object',
  required: ['reply', 'id'],
  properties: {
    id: { type: 'integer', minimum: 1 },
    reply: {
      type: 'object',
      required: ['ok'],
      properties: {
        ok: { type: 'boolean' },
        error: { type: 'string', nullable: true },
        rejected: { type: 'boolean', nullable: true },
        displays: {
          type: 'array',
          maxItems: 10_000,
          default: [],
          items: {
            type: 'object',
            required: ['mime_type', 'data'],
            properties: {
              mime_type: { type: 'string', enum: ['image/png', 'image/svg+xml'] },
              data: { type: 'string' },
              metadata: { type: 'object', default: {}, required: [] },
            },
          },
        },
        tool_calls: {
          type: 'array',
          maxItems: 100,
          default: [],
          items: {
            type: 'object',
            required: ['tool_name', 'args', 'duration_ms', 'success', 'error', 'timestamp'],
            properties: {
              tool_name: { type: 'string' },
              args: { type: 'object', required: [] },
              duration_ms: { type: 'number' },
              success: { type: 'boolean' },
              error: { type: 'string', nullable: true },
              timestamp: { type: 'number' },
            },
          },
        },
        tool_calls_dropped: {
          type: 'object',
          default: {},
          required: [],
          additionalProperties: { type: 'integer', minimum: 0 },
        },
        stashed: { type: 'array', maxItems: 10_000, default: [], items: { type: 'string', maxLength: 200 } },
        echo: { type: 'string', nullable: true },
        captured: {
          type: 'object',
          required: ['kind'],
          properties: { kind: { type: 'string', enum: ['json', 'repr', 'missing'] } },
        },
      },
    },
  },
} as const;

// One compiled validator (ajv generates code for this one shape): zod's generic parser, shared with every
// schema of the MCP layer, cost ~80 µs per reply inside the server against ~1 µs alone.
const validateResult = new Ajv({ useDefaults: true, strict: false }).compile<{ reply: DriverReply; id: number }>(
  replySchema,
);

/** One frame of the kernel's reply pipe, decoded. */
export type DriverFrame =
  | { type: 'output'; stream: 'stdout' | 'stderr'; data: Buffer }
  | { type: 'result'; id: number; reply: DriverReply }
  | { type: 'ready' }
  | { type: 'fault'; reason: string };

/** A result frame's JSON as a frame, or why it is not one (a protocol fault). */
export function parseResult(json: string): DriverFrame | { fault: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return { fault: 'the kernel sent a result that is not JSON' };
  }
  if (!validateResult(raw)) {
    const issue = validateResult.errors?.[0];
    const at = issue?.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'message';
    return { fault: `the kernel sent a malformed reply (${at}: ${issue?.message ?? 'invalid'})` };
  }
  return { type: 'result', id: raw.id, reply: raw.reply };
}

function decode(kind: number, payload: Buffer): DriverFrame | { fault: string } {
  switch (kind) {
    case FrameKind.stdout:
      return { type: 'output', stream: 'stdout', data: payload };
    case FrameKind.stderr:
      return { type: 'output', stream: 'stderr', data: payload };
    case FrameKind.result:
      return parseResult(payload.toString('utf8'));
    case FrameKind.ready:
      return { type: 'ready' };
    default: {
      let reason: unknown;
      try {
        reason = (JSON.parse(payload.toString('utf8')) as { reason?: unknown }).reason;
      } catch {
        /* described below */
      }
      return {
        type: 'fault',
        reason: typeof reason === 'string' ? reason.slice(0, 500) : 'an unreadable fault report',
      };
    }
  }
}

/**
 * Splits the reply pipe into frames (`<kind:1><length:4, big-endian><payload>`), holding at most one frame of
 * `maxBytes`: `onFrame` gets each frame, `onFault` is called once (and the reader stops) on an unknown kind, an
 * oversized frame or a malformed result.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private held = 0;
  private stopped = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onFrame: (frame: DriverFrame) => void,
    private readonly onFault: (reason: string) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.stopped) return;
    this.chunks.push(chunk);
    this.held += chunk.length;
    while (this.held >= HEADER_BYTES && !this.stopped) {
      // A frame is joined once it is complete: a large one arriving in many chunks is copied once.
      if (this.chunks[0]!.length < HEADER_BYTES) this.chunks = [Buffer.concat(this.chunks)];
      const first = this.chunks[0]!;
      const kind = first[0]!;
      const length = first.readUInt32BE(1);
      if (!KINDS.has(kind)) return this.fail(`it wrote an unknown frame kind (0x${kind.toString(16)})`);
      if (length > this.maxBytes)
        return this.fail(`it wrote a ${length}-byte frame (the limit is ${this.maxBytes} bytes)`);
      const end = HEADER_BYTES + length;
      if (this.held < end) return;
      const data = this.chunks.length === 1 ? first : Buffer.concat(this.chunks);
      const rest = data.subarray(end);
      this.chunks = rest.length ? [rest] : [];
      this.held = rest.length;
      const frame = decode(kind, data.subarray(HEADER_BYTES, end));
      if ('fault' in frame) return this.fail(frame.fault);
      this.onFrame(frame);
    }
  }

  private fail(reason: string): void {
    this.stopped = true;
    this.chunks = [];
    this.held = 0;
    this.onFault(reason);
  }
}

/** A reply's captured variable, unless it was missing. */
export function capturedValue(reply: DriverReply | undefined): CapturedValue | undefined {
  const c = reply?.captured;
  return c && (c.kind === 'json' || c.kind === 'repr') ? { kind: c.kind, value: c.value } : undefined;
}

/** The supervisor's line for a command that gets a reply: `<id> <token>` (the user process answers `<token> …`). */
export function pendingLine(id: number, token: string): string {
  return `${id} ${token}\n`;
}

/** A command line for the user-code process: `<token> <json>` (`-` for a command that gets no reply). */
export function commandLine(token: string, body: Record<string, unknown>): string {
  return `${token} ${JSON.stringify(body)}\n`;
}
