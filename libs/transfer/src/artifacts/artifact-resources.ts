import { join } from 'node:path';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import type { CacheHint, McpResource, McpResourceTemplate, ReadResult, ResourceProvider } from '@stoa/mcp';
import type { SessionService } from '@stoa/sessions';
import { checkRelativeName, openKernelFile } from '../files/safe-files';
import { mimeOf, snapshotOutputs } from './artifacts';

/** A session's files are its owner's and change with each execution: nobody else may reuse them, nor for long. */
const PRIVATE_NOW: CacheHint = { ttlMs: 0, cacheScope: 'private' };
/** The template is the same for everyone and fixed by the server's name. */
const TEMPLATE_CACHE: CacheHint = { ttlMs: 3_600_000, cacheScope: 'public' };
/** Larger files are not inlined in a resources/read answer (base64 grows them by a third). */
const MAX_READ_BYTES = 16 * 1024 * 1024;
const TEXT_TYPES = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|geo\+json|ld\+json)$)/;

/**
 * Artifacts (files an execution left in AGORA_OUTPUT_DIR) of the caller's live sessions as MCP resources:
 * `artifact://{server}/{session_id}/{path}`. Ownership is checked on every list and read; a URI of someone
 * else's session answers exactly like an unknown one.
 */
export class ArtifactResources implements ResourceProvider {
  readonly cache = { list: PRIVATE_NOW, templates: TEMPLATE_CACHE };
  private readonly prefix: string;

  constructor(
    private readonly server: string,
    private readonly sessions: SessionService,
    /** `{server}_send`, named in the answer for a file too large to read inline. */
    private readonly sendTool = `${server}_send`,
  ) {
    this.prefix = `artifact://${server}/`;
  }

  /** The resource URI of `name` in session `sessionId`. */
  uri(sessionId: string, name: string): string {
    return `${this.prefix}${encodeURIComponent(sessionId)}/${name.split('/').map(encodeURIComponent).join('/')}`;
  }

  async list(principal: Principal): Promise<McpResource[]> {
    const out: McpResource[] = [];
    for (const rt of this.sessions.list(principal)) {
      const files = await snapshotOutputs(rt.dirs, rt.outputDir);
      for (const [name, st] of [...files].sort(([a], [b]) => a.localeCompare(b)))
        out.push(this.resource(rt.record.id, name, st.size));
    }
    return out;
  }

  templates(): Promise<McpResourceTemplate[]> {
    return Promise.resolve([
      {
        uriTemplate: `${this.prefix}{session_id}/{+path}`,
        name: `${this.server}-session-artifacts`,
        title: `Files of a ${this.server} execution session`,
        description:
          'Files an execution session wrote to AGORA_OUTPUT_DIR: session_id as returned by execute_' +
          `${this.server}_code, path relative to the output directory. Only your own live sessions are readable.`,
      },
    ]);
  }

  async read(principal: Principal, uri: string): Promise<ReadResult | undefined> {
    const ref = this.parse(uri);
    const rt = ref && this.sessions.find(principal, ref.sessionId);
    if (!ref || !rt) return undefined;
    const file = await openKernelFile(rt.dirs, join(rt.outputDir, ref.name)).catch(() => undefined);
    if (!file) return undefined;
    try {
      if (file.size > MAX_READ_BYTES)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Artifact '${ref.name}' is ${file.size} bytes, more than resources/read returns (${MAX_READ_BYTES}). ` +
            `Use ${this.sendTool}(data_ref="${ref.name}", to="user", execution_session_id="${ref.sessionId}") for a download link.`,
          { uri },
        );
      const bytes = await file.handle.readFile();
      const mimeType = mimeOf(ref.name);
      const text = TEXT_TYPES.test(mimeType) ? utf8(bytes) : undefined;
      const content = text === undefined ? { blob: bytes.toString('base64') } : { text };
      return { contents: [{ uri, mimeType, ...content }], cache: PRIVATE_NOW };
    } finally {
      await file.handle.close();
    }
  }

  /** `resource_link`s for the artifacts an execute result lists (its `session_id` and `artifacts` fields). */
  links(value: unknown): McpResource[] {
    const v = value as { session_id?: unknown; artifacts?: unknown } | null;
    if (!v || typeof v !== 'object' || typeof v.session_id !== 'string' || !Array.isArray(v.artifacts)) return [];
    const sessionId = v.session_id;
    return (v.artifacts as { name?: unknown; size_bytes?: unknown }[])
      .filter((a) => typeof a?.name === 'string')
      .map((a) =>
        this.resource(sessionId, a.name as string, typeof a.size_bytes === 'number' ? a.size_bytes : undefined),
      );
  }

  private resource(sessionId: string, name: string, size: number | undefined): McpResource {
    return {
      uri: this.uri(sessionId, name),
      name,
      title: `${name} (session ${sessionId})`,
      mimeType: mimeOf(name),
      ...(size === undefined ? {} : { size }),
    };
  }

  private parse(uri: string): { sessionId: string; name: string } | undefined {
    if (!uri.startsWith(this.prefix)) return undefined;
    const parts = uri.slice(this.prefix.length).split('/');
    if (parts.length < 2) return undefined;
    try {
      const [sessionId, ...rest] = parts.map(decodeURIComponent) as [string, ...string[]];
      return { sessionId, name: checkRelativeName(rest.join('/')) };
    } catch {
      return undefined; // malformed escapes or a refused name: unknown, like any other
    }
  }
}

/** The bytes as text when they are valid UTF-8, else undefined (then they go out as a base64 blob). */
function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
