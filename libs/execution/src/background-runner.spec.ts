import { describe, expect, it } from 'vitest';
import { PromotableOutput } from './background-runner';

describe('PromotableOutput', () => {
  it('forwards live output and holds it until the run is promoted', () => {
    const live: string[] = [];
    const out = new PromotableOutput((_s, t) => live.push(t));
    out.push('stdout', 'a');
    out.push('stderr', 'b');
    expect(live).toEqual(['a', 'b']);
    expect(out.promoted).toBe(false);
    expect(out.held()).toEqual({ stdout: 'a', stderr: 'b' });
  });

  it('sends the job what arrived while it was being created, then everything after', () => {
    const out = new PromotableOutput();
    out.push('stdout', 'before ');
    const sent = out.held();
    out.push('stdout', 'during ');
    const job: string[] = [];
    out.promote((s, t) => job.push(`${s}:${t}`), sent);
    out.push('stdout', 'after');
    expect(out.promoted).toBe(true);
    expect(job).toEqual(['stdout:during ', 'stdout:after']);
  });
});
