import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '@modelcontextprotocol/server';
import { envelopeRefusal, removedMethodRefusal, transportRefusal } from './request-guard';
import { readable } from './readable-errors';

const req = (method: string, contentType?: string) =>
  ({ method, headers: contentType ? { 'content-type': contentType } : {} }) as IncomingMessage;

describe('transportRefusal', () => {
  it('answers 405 with the methods /mcp serves for PUT, PATCH and OPTIONS', () => {
    for (const m of ['PUT', 'PATCH', 'OPTIONS'])
      expect(transportRefusal(req(m))).toMatchObject({ status: 405, headers: { allow: 'GET, POST, DELETE' } });
  });

  it('answers 415 naming application/json for a POST of another Content-Type', () => {
    expect(transportRefusal(req('POST', 'text/plain'))?.message).toMatch(
      /^Unsupported Media Type: Content-Type 'text\/plain' is not accepted\. Send JSON-RPC messages as Content-Type: application\/json\.$/,
    );
    expect(transportRefusal(req('POST'))?.status).toBe(415);
  });

  it('lets JSON POSTs (with a charset), GET and DELETE through', () => {
    expect(transportRefusal(req('POST', 'application/json; charset=utf-8'))).toBeUndefined();
    expect(transportRefusal(req('GET'))).toBeUndefined();
    expect(transportRefusal(req('DELETE'))).toBeUndefined();
  });
});

describe('removedMethodRefusal', () => {
  const meta = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } };
  it('answers 404 and -32601 for resources/subscribe and unsubscribe in a 2026-07-28 request, keeping its id', () => {
    for (const method of ['resources/subscribe', 'resources/unsubscribe']) {
      const r = removedMethodRefusal(req('POST'), { jsonrpc: '2.0', id: 7, method, params: meta });
      expect(r).toMatchObject({ status: 404, code: -32601, id: 7 });
      expect(r?.message).toMatch(
        new RegExp(`^Method not found: ${method} is not part of MCP 2026-07-28 .*resources/read`),
      );
    }
  });

  it('leaves 2025-era requests (an MCP session, or no per-request _meta) and other methods alone', () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'x://y', ...meta } };
    const inSession = { method: 'POST', headers: { 'mcp-session-id': 's-1' } } as unknown as IncomingMessage;
    expect(removedMethodRefusal(inSession, body)).toBeUndefined();
    expect(removedMethodRefusal(req('POST'), { ...body, params: { uri: 'x://y' } })).toBeUndefined();
    expect(removedMethodRefusal(req('POST'), { ...body, method: 'resources/read' })).toBeUndefined();
  });
});

describe('envelopeRefusal', () => {
  it('refuses a 10 MB tool name with a reason a few hundred bytes long', () => {
    const r = envelopeRefusal({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'a'.repeat(10 * 1024 * 1024) },
    });
    expect(r).toMatchObject({ code: -32602, id: 3 });
    expect(r!.message.length).toBeLessThan(300);
    expect(r!.message).toContain('params.name is 10485760 characters long (at most 128)');
  });

  it('refuses a task id that is not a string or too long', () => {
    expect(envelopeRefusal({ id: 1, method: 'tasks/get', params: { taskId: { a: 1 } } })?.message).toBe(
      'Invalid params for tasks/get: params.taskId must be a string, not an object. Pass the taskId string a task-creating call returned.',
    );
    expect(envelopeRefusal({ id: 1, method: 'tasks/cancel', params: { taskId: 'x'.repeat(1 << 20) } })?.code).toBe(
      -32602,
    );
  });

  it('refuses a non-string cursor on list methods but not a missing one', () => {
    expect(envelopeRefusal({ id: 1, method: 'tools/list', params: { cursor: 5 } })?.code).toBe(-32602);
    expect(envelopeRefusal({ id: 1, method: 'tools/list', params: {} })).toBeUndefined();
  });

  it('refuses an unbounded JSON-RPC id or method without repeating it', () => {
    expect(envelopeRefusal({ id: 'i'.repeat(5000), method: 'tools/list' })).toMatchObject({
      status: 400,
      code: -32600,
      id: null,
    });
    expect(envelopeRefusal({ id: 1, method: 'm'.repeat(5000) })!.message.length).toBeLessThan(200);
  });
});

describe('readable', () => {
  const dump = JSON.stringify(
    [
      {
        expected: 'string',
        code: 'invalid_type',
        path: ['params', 'cursor'],
        message: 'Invalid input: expected string, received number',
      },
    ],
    null,
    2,
  );

  it('turns an SDK schema failure (-32603 with a zod dump) into -32602 with a one-line reason', () => {
    const out = readable(new Error(dump), 'tools/list') as ProtocolError;
    expect(out.code).toBe(-32602);
    expect(out.message).toBe(
      'Invalid params for tools/list: params.cursor: Invalid input: expected string, received number. Fix these fields and retry.',
    );
  });

  it('makes a -32602 that carries a zod dump one line too', () => {
    const out = readable(
      new ProtocolError(-32602, `Invalid tools/call request: ${dump}`),
      'tools/call',
    ) as ProtocolError;
    expect(out.message).not.toContain('\n');
  });

  it('bounds the message of any other protocol error and leaves short ones alone', () => {
    expect(
      (readable(new ProtocolError(-32602, `Tool ${'a'.repeat(100_000)} not found`), 'tools/call') as Error).message
        .length,
    ).toBeLessThan(600);
    const short = new ProtocolError(-32602, 'Tool x not found');
    expect(readable(short, 'tools/call')).toBe(short);
  });
});
