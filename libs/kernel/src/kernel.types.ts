/** A PNG/SVG display produced by an execution (kept out of agent responses). */
export interface KernelDisplay {
  mime_type: 'image/png' | 'image/svg+xml';
  data: string;
  metadata: Record<string, unknown>;
}

/** How an execution ended. */
export const ExecutionOutcome = {
  /** The code ran to completion (possibly raising). */
  completed: 'completed',
  /** Timed out; SIGINT interrupted it and the namespace was kept. */
  interrupted: 'interrupted',
  /** Timed out; the kernel ignored SIGINT, was killed, and its state is lost. */
  killed: 'killed',
  /** The kernel process died during the execution (segfault, os._exit, OOM kill). */
  died: 'died',
} as const;
export type ExecutionOutcome = (typeof ExecutionOutcome)[keyof typeof ExecutionOutcome];

/** Captured output of one stream: full when `length` equals the kept text, else head and tail. */
export interface StreamText {
  /** Total characters produced. */
  length: number;
  /** First characters (up to the capture's head size). */
  head(n: number): string;
  /** Last characters (up to the capture's tail size). */
  tail(n: number): string;
  /** All text, when `complete`. */
  text(): string;
  complete: boolean;
}

export interface KernelExecution {
  outcome: ExecutionOutcome;
  /** Python raised (traceback is in stderr). */
  raised: boolean;
  /** The host stopped the kernel because it broke the driver protocol (e.g. user code flooding a driver pipe): why. */
  fault?: string;
  /** The code screen refused the cell; the message says why (nothing ran). */
  rejected?: string;
  stdout: StreamText;
  stderr: StreamText;
  displays: KernelDisplay[];
  /** Value returned by internal ops (inspect). */
  value?: unknown;
  /** Driver-side error text (internal ops). */
  error?: string;
  /** Tool calls made by this execution (each record belongs to exactly this execution). */
  toolCalls: ToolCallRecord[];
  /** Calls beyond the first 100, counted per tool (not traced in detail). */
  toolCallsDropped?: Record<string, number>;
  /** Handle ids created by `stash(obj)` during this execution (files in `{transferDir}/stash`). */
  stashed: string[];
  durationMs: number;
  /** For `died`: how the process ended. */
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  /** A session cap this cell ran into (memory, processes, disk quota): what happened and what to do. */
  limitNotes?: string[];
  /** The variable named by `ExecuteOptions.capture`: JSON when it serialises, else its repr; absent when missing. */
  captured?: CapturedValue;
}

/** A namespace variable's value as the kernel could send it: JSON, or its repr when it is not JSON. */
export interface CapturedValue {
  kind: 'json' | 'repr';
  value: unknown;
}

export interface ExecuteOptions {
  timeoutMs: number;
  /** After SIGINT, how long to wait before killing the kernel. */
  graceMs: number;
  /** Characters kept from the start and end of each stream. */
  captureChars: number;
  /** Run the reference's AST screen first (agent guidance). */
  screen?: { allowed_prefixes: readonly string[] };
  /** Domain-function policy enforced by the tool proxies (glob patterns). */
  policy?: { allowed?: string[]; blocked?: string[] };
  /** Live output (for progress notifications). */
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  /** A namespace variable to read once the cell ran without raising (a batch item's result), in the same round trip. */
  capture?: string;
  /**
   * Asset tags and handle ids (keys: the exact string literals, as `literals()` returned them) replaced in the
   * code by variables bound to a path or to the loaded object. The code screen still sees the original code.
   */
  rewrite?: Record<string, RewriteTarget>;
}

/** How kernels serialise objects for handles and transfers (the best importable one is chosen). */
export const SERIALIZERS = ['pickle', 'cloudpickle', 'dill'] as const;
export type Serializer = (typeof SERIALIZERS)[number];

/** What a literal in the code stands for: a file path (asset tag) or an object file to load (handle id). */
export type RewriteTarget = { kind: 'path'; path: string } | { kind: 'object'; path: string; serializer: Serializer };

/** `KernelProcess.dump`: whether the variable exists and how it was written (or why it could not be). */
export interface DumpResult {
  found: boolean;
  serializer?: Serializer;
  sizeBytes?: number;
  /** `Type: message` of a failed serialisation, or why the dump did not finish. */
  error?: string;
  /** The object serialises to more than the dump's `maxBytes` (`sizeBytes` is its full size). */
  tooLarge?: boolean;
}

/** `KernelProcess.load`: the variable is bound, or the traceback text of the failure. */
export type LoadResult = { ok: true } | { ok: false; error: string };

/** One traced call of a domain tool proxy (reference §3.6). */
export interface ToolCallRecord {
  tool_name: string;
  args: Record<string, unknown>;
  result: unknown;
  duration_ms: number;
  success: boolean;
  error: string | null;
  timestamp: number;
}

/** A tool as the kernel driver needs it to build a proxy (types stay strings). */
export interface ToolSpec {
  name: string;
  description: string;
  module: string;
  parameters: { name: string; type: string; description: string; required: boolean; default?: unknown }[];
  returns: { name: string; type: string; description: string }[];
}
