import type { Principal } from '@stoa/core';
import type { ToolCallRecord } from '@stoa/kernel';
import type { SessionRuntime } from '@stoa/sessions';

/** Arguments of `execute_{name}_code`. */
export interface ExecuteInput {
  code: string;
  description?: string;
  timeout?: number;
  execution_session_id?: string | null;
}

/** Where the call came from: the legacy MCP session id (2025-era clients), if any. */
export interface ExecuteOrigin {
  transportSessionId?: string;
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  /** Aborted when the caller cancels the request. */
  signal?: AbortSignal;
  /** Domain-function policy from a gateway, enforced by the kernel's tool proxies. */
  policy?: FunctionPolicy;
}

/** Glob patterns on domain function names (gateway `allowed_functions` / `blocked_functions`). */
export interface FunctionPolicy {
  allowed?: string[];
  blocked?: string[];
}

/** The inline result JSON of the reference (§1.2). */
export interface ExecuteResult {
  description: string;
  stdout: string;
  stderr: string;
  execution_time: number;
  success: boolean;
  error: string | null;
  tool_calls: ToolCallRecord[];
  artifacts: { name: string; size_bytes: number; mime_type: string }[];
  note?: string;
  session_id?: string;
  /** Set when the kernel was replaced during this call and all state was lost. */
  kernel_restarted?: boolean;
  /** Tool calls beyond the first 100 of this execution, counted per tool. */
  tool_calls_omitted?: Record<string, number>;
  displays?: never[];
}

/** The reference's job handle (async_only, or adaptive promotion). */
export interface JobHandle {
  job_id: string;
  status: 'running';
  session_id: string;
  promoted?: true;
  description?: string;
  poll_tool: string;
  message: string;
}

/** An execute call placed in its session, as the inline and background runners take it. */
export interface ExecuteCall {
  principal: Principal;
  runtime: SessionRuntime;
  code: string;
  timeoutS: number;
  description: string;
  origin: ExecuteOrigin;
}
