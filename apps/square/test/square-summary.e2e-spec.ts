import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type AppProcess, shutDown } from '../../../test/support/app-process';
import { startSquare } from '../../../test/support/square-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

type Mode = 'answer' | 'fail' | 'hang';

interface Completion {
  path: string;
  authorization: string | undefined;
  body: { model: string; max_tokens: number; messages: { role: string; content: string }[] };
}

/**
 * A real local OpenAI-compatible endpoint: `/v1/chat/completions` answers a summary, a 500, or nothing at all
 * (a hung model server), as the test sets it; it records what the square sent.
 */
function completionsServer(): { server: Server; mode: { now: Mode }; seen: Completion[]; hung: ServerResponse[] } {
  const mode = { now: 'answer' as Mode };
  const seen: Completion[] = [];
  const hung: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      seen.push({
        path: req.url ?? '',
        authorization: req.headers.authorization,
        body: JSON.parse(raw) as Completion['body'],
      });
      if (req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
      if (mode.now === 'hang') return void hung.push(res);
      if (mode.now === 'fail')
        return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"overloaded"}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'cmpl-1',
          object: 'chat.completion',
          choices: [
            { index: 0, message: { role: 'assistant', content: '  Alice plans the release; Bob reviews it.  ' } },
          ],
        }),
      );
    });
  });
  return { server, mode, seen, hung };
}

/** chat_summarize_channel against a real local model endpoint, and its fallback to statistics. */
describe('chat_summarize_channel with an OpenAI-compatible endpoint', () => {
  const llm = completionsServer();
  let square: AppProcess;
  let alice: TestClient;
  let aliceId: string;

  beforeAll(async () => {
    await new Promise<void>((ok) => llm.server.listen(0, '127.0.0.1', ok));
    const { port } = llm.server.address() as AddressInfo;
    square = await startSquare({
      chat: {
        llm_api_url: `http://127.0.0.1:${port}/v1`,
        llm_api_key: 'sk-local-test',
        llm_model: 'local-summarizer',
        llm_timeout_seconds: 1,
      },
    });
    alice = await v2Client(square.mcpUrl, 'auto', devToken('alice'));
    aliceId = (await alice.call('register', { name: 'alice' })).json.agent_id as string;
    for (const content of ['I will plan the release.', 'Bob, please review it.'])
      await alice.call('chat_post_message', { channel: '#release', content });
  });
  beforeEach(() => {
    llm.mode.now = 'answer';
    llm.seen.length = 0;
  });
  afterAll(async () => {
    for (const res of llm.hung) res.destroy();
    await shutDown(alice, square);
    await new Promise((done) => llm.server.close(done));
  });

  it('returns the model’s summary with the statistics, having sent it the channel’s transcript', async () => {
    const r = await alice.call('chat_summarize_channel', { channel: '#release' });
    expect(r.json).toEqual({
      summary: 'Alice plans the release; Bob reviews it.',
      message_count: 2,
      participants: [aliceId],
      time_span_hours: expect.any(Number) as number,
    });
    expect(llm.seen).toHaveLength(1);
    const [sent] = llm.seen;
    expect(sent).toMatchObject({ path: '/v1/chat/completions', authorization: 'Bearer sk-local-test' });
    expect(sent!.body).toMatchObject({ model: 'local-summarizer', max_tokens: 500 });
    expect(sent!.body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    const transcript = sent!.body.messages[1]!.content.split('\n');
    expect(transcript).toEqual([
      expect.stringMatching(new RegExp(`^\\[[^\\]]+\\] ${aliceId}: I will plan the release\\.$`)),
      expect.stringMatching(new RegExp(`^\\[[^\\]]+\\] ${aliceId}: Bob, please review it\\.$`)),
    ]);
  });

  it('falls back to the statistics, saying why, when the endpoint answers an error', async () => {
    llm.mode.now = 'fail';
    const r = await alice.call('chat_summarize_channel', { channel: '#release' });
    expect(r.isError).toBe(false);
    expect(r.json.summary).toMatch(
      /^2 messages from 1 participants over [\d.]+ hours in #release \(last at [^)]+\)\. \(LLM summary unavailable: the LLM endpoint answered HTTP 500\)$/,
    );
    expect(r.json).toMatchObject({ message_count: 2, participants: [aliceId] });
    expect(llm.seen).toHaveLength(1);
  });

  it('falls back to the statistics after llm_timeout_seconds when the endpoint never answers', async () => {
    llm.mode.now = 'hang';
    const started = performance.now();
    const r = await alice.call('chat_summarize_channel', { channel: '#release' });
    const took = performance.now() - started;
    expect(r.json.summary).toMatch(
      /^2 messages from 1 participants .*\(LLM summary unavailable: the LLM endpoint did not answer within 1 s\)$/,
    );
    expect(r.json).toMatchObject({ message_count: 2 });
    expect(llm.hung).toHaveLength(1);
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(5_000);
  });

  it('answers statistics alone for an empty channel without asking the model', async () => {
    await alice.call('chat_post_message', { channel: '#quiet', content: 'x' });
    const r = await alice.call('chat_summarize_channel', { channel: '#quiet', since: '2999-01-01T00:00:00Z' });
    expect(r.json).toMatchObject({ message_count: 0, participants: [] });
    expect(llm.seen).toEqual([]);
  });
});
