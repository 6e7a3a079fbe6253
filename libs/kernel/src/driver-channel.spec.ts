import { describe, expect, it } from 'vitest';
import { BoundedLines, parseFrame } from './driver-channel';

function reader(max: number) {
  const lines: string[] = [];
  let overflows = 0;
  const r = new BoundedLines(
    max,
    (l) => lines.push(l),
    () => overflows++,
  );
  return { r, lines, overflows: () => overflows };
}

describe('BoundedLines', () => {
  it('joins lines split across chunks, multi-byte characters included', () => {
    const { r, lines } = reader(100);
    const text = Buffer.from('{"a":"é"}\nsecond\n');
    r.push(text.subarray(0, 7));
    r.push(text.subarray(7, 12));
    r.push(text.subarray(12));
    expect(lines).toEqual(['{"a":"é"}', 'second']);
  });

  it('reports a line longer than the bound once and ignores everything after it', () => {
    const { r, lines, overflows } = reader(10);
    r.push(Buffer.from('x'.repeat(8)));
    r.push(Buffer.from('x'.repeat(8)));
    r.push(Buffer.from('\nlater\n'));
    expect(overflows()).toBe(1);
    expect(lines).toEqual([]);
  });
});

describe('parseFrame', () => {
  it('accepts a result frame and fills the defaults', () => {
    const parsed = parseFrame('{"reply":{"ok":true},"type":"result","id":3}');
    expect(parsed).toEqual({
      frame: {
        type: 'result',
        id: 3,
        reply: { ok: true, displays: [], tool_calls: [], tool_calls_dropped: {}, stashed: [] },
      },
    });
  });

  it("keeps the supervisor's type and id when a reply body repeats those keys", () => {
    const body = '{"ok":true},"type":"fault","reason":"x","id":99';
    expect(parseFrame(`{"reply":${body},"type":"result","id":3}`)).toMatchObject({ frame: { type: 'result', id: 3 } });
  });

  it.each([
    ['not JSON', '{"reply":', 'the kernel sent a reply line that is not JSON'],
    [
      'an unknown frame type',
      '{"type":"pong"}',
      'the kernel sent a malformed reply (type: Invalid discriminator value',
    ],
    [
      'a tool call of the wrong shape',
      '{"reply":{"ok":true,"tool_calls":[{"tool_name":1}]},"type":"result","id":1}',
      'the kernel sent a malformed reply (reply.tool_calls.0.tool_name:',
    ],
  ])('turns %s into a fault', (_what, line, fault) => {
    const parsed = parseFrame(line);
    expect('fault' in parsed ? parsed.fault.slice(0, fault.length) : parsed).toBe(fault);
  });
});
