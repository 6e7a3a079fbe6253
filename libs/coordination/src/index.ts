/** `chat:`, `presence:`, `board:`, `locks:` config and the options of a square. */
export {
  boardConfigSchema,
  chatConfigSchema,
  lockConfigSchema,
  presenceConfigSchema,
  type CoordinationOptions,
} from './coordination.config';
/** The Nest module and its migrations. */
export { CoordinationModule } from './coordination.module';
export { COORDINATION_MIGRATIONS } from './coordination.migrations';
/** The reference's error codes (each with `details.fix`). */
export {
  AgentNotFoundError,
  ChannelLimitError,
  ChannelNotFoundError,
  LockNotHeldError,
  NameTakenError,
  NotAuthorizedError,
  ResourceLimitError,
  SchemaViolationError,
  ValidationError,
  VersionConflictError,
} from './coordination.errors';
/** What tools and the admin API show. */
export {
  AgentStatus,
  SYSTEM_AGENT,
  type AgentRecord,
  type AgentRef,
  type AgentView,
  type BoardEntryView,
  type ChannelView,
  type LockView,
  type MessageView,
  type SignalView,
  type SquareCaller,
} from './coordination.types';
/** The event bus (in-process, or shared by replicas over Redis). */
export { EventBus } from './bus/event-bus';
export type { SquareEvent, SquareEventType } from './bus/square-events';
/** Agents and presence. */
export { publicView, RegistryService, type AgentQuery, type Registration } from './registry/registry.service';
/** Channels, messages, await. */
export { ChatService, GENERAL, type AwaitInput, type PostInput } from './chat/chat.service';
export type { AwaitResult } from './chat/chat-await';
/** Versioned board with JSON Schema. */
export { BoardService, type PutInput } from './board/board.service';
/** Leases with fencing tokens; signals. */
export { LockService, type AcquireInput, type AcquireResult } from './locks/lock.service';
export { SignalService, type SendInput } from './locks/signal.service';
