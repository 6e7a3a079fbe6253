import type { Readable } from 'node:stream';
import type { Principal } from '@stoa/core';

/** What `{name}_send` hands a {@link Publisher}: a kernel variable serialised by the kernel, or an output file. */
export interface PublishItem {
  /** `object`: data_ref named a kernel variable (serialised inside the kernel); `file`: a file in AGORA_OUTPUT_DIR. */
  readonly kind: 'object' | 'file';
  readonly dataRef: string;
  /** The target name the agent asked for (`path`, else `name`, else data_ref). */
  readonly name: string;
  readonly sizeBytes: number;
  /** pickle, dill or cloudpickle, for objects. */
  readonly serializer?: string;
  /** The bytes, read once from the start (the file is closed after `send` settles). */
  stream(): Readable;
}

/** Who sends, from where: frozen copies (the bearer token is left out). */
export interface PublishRequest {
  readonly principal: Readonly<Omit<Principal, 'token'>>;
  readonly sessionId: string;
  readonly transferId: string;
  readonly sourceServer: string;
}

/** Where the item went; `remote_uri` is returned to the agent (with `expires_at` when the location expires). */
export interface PublishOutcome {
  remote_uri: string;
  expires_at?: string;
}

/**
 * A `{name}_send(to=name)` destination (an internal archive, a ticket system, a queue). The built-in user, local,
 * blob and peer destinations implement it too (with an item that carries the opened file and a request that
 * carries the caller's credentials); an embedding's publishers get the frozen, tokenless defaults.
 * Throw an Error whose message tells the agent what to do next; it becomes `{success: false, error}`.
 */
export interface Publisher<Item extends PublishItem = PublishItem, Request extends PublishRequest = PublishRequest> {
  /** The `to=` value; must not be one of the built-in destinations (user, local, blob) or a peer's name. */
  readonly name: string;
  /** One line for the tool description, e.g. "archived in the team's records store". */
  readonly description?: string;
  send(item: Item, request: Request): Promise<PublishOutcome>;
}

/** Injection token of an executor's custom {@link Publisher}s (an array). */
export const PUBLISHERS = Symbol('PUBLISHERS');
