import type { MessageView } from '../coordination.types';

/** What happens in a square (the reference's event names, plus the plugins it only designed). */
export type SquareEvent =
  | { type: 'agent.registered'; agent_id: string; name: string; role: string | null; arrived: boolean }
  | { type: 'agent.disconnected'; agent_id: string; name: string; reason: string }
  | { type: 'chat.message.posted'; channel: string; agent_id: string; message_id: string; message: MessageView }
  | { type: 'board.updated'; key: string; version: number; agent_id: string }
  | { type: 'lock.released'; name: string }
  | { type: 'signal.sent'; to: string; signal_id: string };

export type SquareEventType = SquareEvent['type'];
export type EventOf<T extends SquareEventType> = Extract<SquareEvent, { type: T }>;

/** A handler learns whether this replica published the event (side effects such as welcomes run once). */
export type SquareEventHandler<T extends SquareEventType> = (event: EventOf<T>, local: boolean) => void;
