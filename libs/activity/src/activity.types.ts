import { z } from 'zod';

/**
 * The reference's twelve activity event types (§9.2; the names are wire contract), plus two of ours:
 * `tool_called`, one tool call a connector (router, gateway, dispatcher) proxied to an upstream, with `tool_name`,
 * `target_server` (the upstream), `duration_ms` and `success` (the reference's connectors publish nothing); and
 * `batch_progress`, a parallel batch's counts (`total`, `completed`, `failed`, `running`, as check_batch counts
 * them) when it is created and each time one of its items ends, in the lane of the batch's parent session.
 */
export const ActivityEventType = {
  codeExecuted: 'code_executed',
  codeFailed: 'code_failed',
  jobStarted: 'job_started',
  jobFinished: 'job_finished',
  toolSearch: 'tool_search',
  dataSearched: 'data_searched',
  skillLoaded: 'skill_loaded',
  workflowPlanned: 'workflow_planned',
  batchCancelled: 'batch_cancelled',
  objectSent: 'object_sent',
  artifactPublished: 'artifact_published',
  objectReceived: 'object_received',
  toolCalled: 'tool_called',
  batchProgress: 'batch_progress',
} as const;
export type ActivityEventType = (typeof ActivityEventType)[keyof typeof ActivityEventType];
export const ACTIVITY_EVENT_TYPES = Object.values(ActivityEventType) as [ActivityEventType, ...ActivityEventType[]];

const text = z.string();
const optText = text.nullish();
const names = z.array(z.string().max(500)).max(1000).nullish();
const count = z.number().int().nonnegative().nullish();

/** A rendered PNG (base64) or SVG (text) from a kernel display. */
export const activityDisplaySchema = z.object({
  mime_type: z.enum(['image/png', 'image/svg+xml']),
  data: z.string(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
export type ActivityDisplay = z.output<typeof activityDisplaySchema>;

const fileLink = z.object({
  name: z.string().max(1000),
  mime_type: z.string().max(200).nullish(),
  size_bytes: z.number().nonnegative().nullish(),
  download_url: z.string().max(4000).nullish(),
});

/**
 * One event as a Stoa app posts it (reference `ActivityEvent`, flat; unknown extra fields are dropped). `id` is
 * assigned on ingest. `user` (the principal that owns the session) is ours: the dashboard shows each user their
 * own sessions.
 */
export const activityEventSchema = z.object({
  type: z.enum(ACTIVITY_EVENT_TYPES),
  server: z.string().min(1).max(200),
  /** Unix seconds. */
  timestamp: z.number().positive().optional(),
  description: z.string().default(''),
  user: z.string().max(300).nullish(),
  session_id: z.string().max(200).nullish(),
  code: optText,
  stdout: optText,
  stderr: optText,
  success: z.boolean().nullish(),
  duration_ms: z.number().nonnegative().nullish(),
  tool_calls: z.array(z.record(z.string(), z.unknown())).max(1000).nullish(),
  error: optText,
  displays: z.array(activityDisplaySchema).max(100).nullish(),
  artifacts: z.array(fileLink).max(1000).nullish(),
  saved_files: z.array(fileLink).max(1000).nullish(),
  job_id: optText,
  batch_id: optText,
  transfer_id: optText,
  data_ref: optText,
  name: optText,
  variable_name: optText,
  target_server: optText,
  source_server: optText,
  query: optText,
  category: optText,
  matched_tools: names,
  matched_skills: names,
  matched_artifacts: names,
  skill_name: optText,
  artifact_name: optText,
  destination: optText,
  remote_uri: optText,
  size_bytes: z.number().nonnegative().nullish(),
  mime_type: optText,
  domain: optText,
  mode: optText,
  current_state: optText,
  target_state: optText,
  tool_name: optText,
  /** batch_progress: items in the batch, and how many ended completed, ended failed or cancelled, or still run. */
  total: count,
  completed: count,
  failed: count,
  running: count,
});
/** An event as producers write it (`server` and `timestamp` are filled in by the publisher when absent). */
export type ActivityEventInput = Omit<z.input<typeof activityEventSchema>, 'server'> & { server?: string };
/** An event after validation. */
export type ActivityEvent = z.output<typeof activityEventSchema>;
