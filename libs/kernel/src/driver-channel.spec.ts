import { describe, expect, it } from 'vitest';
import { type DriverFrame, FrameKind, FrameReader, parseResult } from './driver-channel';

const frame = (kind: number, payload: string | Buffer): Buffer => {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const header = Buffer.alloc(5);
  header[0] = kind;
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
};

function reader(max = 1000) {
  const frames: DriverFrame[] = [];
  const faults: string[] = [];
  const r = new FrameReader(
    max,
    (f) => frames.push(f),
    (why) => faults.push(why),
  );
  return { r, frames, faults };
}

describe('FrameReader', () => {
  const stream = Buffer.concat([
    frame(FrameKind.stdout, 'é-out\n'),
    frame(FrameKind.stderr, 'err'),
    frame(FrameKind.result, '{"reply":{"ok":true},"id":2}'),
    frame(FrameKind.ready, '{}'),
  ]);

  it.each([1, 3, 7, 1000])('reads output, results and ready in order from chunks of %i bytes', (size) => {
    const { r, frames, faults } = reader();
    for (let at = 0; at < stream.length; at += size) r.push(stream.subarray(at, at + size));
    expect(faults).toEqual([]);
    expect(frames.map((f) => f.type)).toEqual(['output', 'output', 'result', 'ready']);
    expect(frames[0]).toMatchObject({ stream: 'stdout' });
    expect((frames[0] as { data: Buffer }).data.toString()).toBe('é-out\n');
    expect(frames[1]).toMatchObject({ stream: 'stderr' });
    expect(frames[2]).toMatchObject({ id: 2, reply: { ok: true } });
  });

  it('reports an unknown frame kind once and reads nothing after it', () => {
    const { r, frames, faults } = reader();
    r.push(Buffer.concat([frame(0x41, 'x'), frame(FrameKind.ready, '{}')]));
    r.push(frame(FrameKind.ready, '{}'));
    expect(faults).toEqual(['it wrote an unknown frame kind (0x41)']);
    expect(frames).toEqual([]);
  });

  it('refuses a frame longer than the bound from its header, before holding it', () => {
    const { r, faults } = reader(10);
    r.push(frame(FrameKind.stdout, 'x'.repeat(11)).subarray(0, 5));
    expect(faults).toEqual(['it wrote a 11-byte frame (the limit is 10 bytes)']);
  });

  it('passes on the fault a supervisor reports', () => {
    const { r, frames } = reader();
    r.push(frame(FrameKind.fault, '{"reason":"user code wrote to the reply channel"}'));
    expect(frames).toEqual([{ type: 'fault', reason: 'user code wrote to the reply channel' }]);
  });
});

describe('parseResult', () => {
  it('accepts a result and fills the defaults', () => {
    expect(parseResult('{"reply":{"ok":true},"id":3}')).toEqual({
      type: 'result',
      id: 3,
      reply: { ok: true, displays: [], tool_calls: [], tool_calls_dropped: {}, stashed: [] },
    });
  });

  it("keeps the supervisor's id when a reply body repeats that key", () => {
    expect(parseResult('{"reply":{"ok":true},"id":99,"id":3}')).toMatchObject({ type: 'result', id: 3 });
  });

  it.each([
    ['not JSON', '{"reply":', 'the kernel sent a result that is not JSON'],
    [
      'a result without a reply',
      '{"id":1}',
      "the kernel sent a malformed reply (message: must have required property 'reply')",
    ],
    [
      'a tool call of the wrong shape',
      '{"reply":{"ok":true,"tool_calls":[{"tool_name":1}]},"id":1}',
      'the kernel sent a malformed reply (reply.tool_calls.0',
    ],
    [
      'a display of another type',
      '{"reply":{"ok":true,"displays":[{"mime_type":"text/html","data":"<b>"}]},"id":1}',
      'the kernel sent a malformed reply (reply.displays.0.mime_type: must be equal to one of the allowed values)',
    ],
  ])('turns %s into a fault', (_what, json, fault) => {
    const parsed = parseResult(json);
    expect('fault' in parsed ? parsed.fault.slice(0, fault.length) : parsed).toBe(fault);
  });
});
