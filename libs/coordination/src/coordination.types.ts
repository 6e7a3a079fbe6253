import type { Principal } from '@stoa/core';

/** Presence as tools show it. */
export const AgentStatus = { online: 'online', busy: 'busy', offline: 'offline' } as const;
export type AgentStatus = (typeof AgentStatus)[keyof typeof AgentStatus];

/** The reference's agent object (ISO-8601 UTC times). */
export interface AgentView {
  id: string;
  name: string;
  role: string | null;
  status: AgentStatus;
  capabilities: string[];
  manifest: Record<string, unknown>;
  current_task: string | null;
  last_heartbeat_at: string;
  registered_at: string;
}

/** An agent with its owner, for this lib and the admin API (tools never show the principal). */
export interface AgentRecord extends AgentView {
  principal: string;
}

/** Who an agent is: what a call resolved as its caller's agent carries (these never change). */
export type AgentRef = Pick<AgentRecord, 'id' | 'name' | 'principal'>;

/** The reference's message object; `seq` orders a channel (1, 2, …). */
export interface MessageView {
  id: string;
  channel_id: string;
  channel: string;
  seq: number;
  agent_id: string;
  parent_id: string | null;
  content_type: string;
  content: string;
  created_at: string;
}

export interface ChannelView {
  name: string;
  topic: string | null;
  message_count: number;
  last_activity_at: string | null;
  created_at: string;
}

export interface BoardEntryView {
  key: string;
  version: number;
  value: unknown;
  schema: Record<string, unknown> | null;
  updated_by: string;
  updated_at: string;
}

export interface LockView {
  name: string;
  holder: string;
  holder_name: string | null;
  fencing_token: number;
  acquired_at: string;
  expires_at: string;
}

export interface SignalView {
  id: string;
  from: string;
  to: string;
  kind: string;
  payload: unknown;
  created_at: string;
}

/** Who is calling a square tool: the principal, its MCP session (2025 era), and the reference's `_agent_id`. */
export interface SquareCaller {
  principal: Principal;
  transportSessionId?: string;
  agentId?: string;
  signal?: AbortSignal;
}

/** The agent id the square's own messages (welcomes, departures) are posted as. */
export const SYSTEM_AGENT = 'system';

/** ISO-8601 UTC of epoch ms. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
