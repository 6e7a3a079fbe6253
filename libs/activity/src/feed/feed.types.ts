import type { ActivityEvent } from '../activity.types';

/** A figure as readers get it: a reference to `GET /figures/{figure}`, or a note that it was too large. */
export interface FeedDisplay {
  mime_type: 'image/png' | 'image/svg+xml';
  /** Absent when the publisher omitted the figure for its size (metadata.omitted). */
  figure?: string;
  metadata: Record<string, unknown>;
}

/** A stored event as the stream and `/events/recent` send it. */
export type FeedEvent = Omit<ActivityEvent, 'displays' | 'timestamp'> & {
  id: string;
  timestamp: number;
  displays?: FeedDisplay[];
};

/** Who reads the feed: a user sees events of their own sessions, an admin everyone's. */
export interface FeedReader {
  sub: string;
  admin: boolean;
}

/** Whether `reader` may see `e`. */
export function canRead(reader: FeedReader, e: Pick<FeedEvent, 'user'>): boolean {
  return reader.admin || (!!e.user && e.user === reader.sub);
}

/** `feed:` settings of the activity app the store and hub need. */
export interface FeedSettings {
  /** Events (and figures no longer referenced) older than this are deleted. */
  retentionMs: number;
  sweepIntervalMs: number;
  /** Redis for the live stream across replicas; undefined → in-process. */
  redisUrl?: string;
  /** Redis channel shared by the replicas of one activity app. */
  channel: string;
}
