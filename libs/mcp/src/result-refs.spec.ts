import { describe, expect, it } from 'vitest';
import { isExecuteTool, RESULT_REFS_META, resultRefs, withRefs } from './result-refs';
import { toToolResult } from './tool-result';
import { ToolFailure } from './mcp.types';

describe('result refs', () => {
  it("puts a value's session, job and batch ids in _meta and keeps its JSON text as before", () => {
    const value = { job_id: 'j_1', status: 'running', session_id: 's-1', batch_id: 'b_1' };
    const result = toToolResult(value);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(value, null, 2) }]);
    expect(resultRefs(result)).toEqual({ session_id: 's-1', job_id: 'j_1', batch_id: 'b_1' });
  });

  it('adds no _meta to a value without ids, and ignores nested or non-string ids', () => {
    expect(toToolResult({ success: true, sessions: [{ session_id: 's-1' }] })).not.toHaveProperty('_meta');
    expect(toToolResult({ session_id: 's-2', job_id: null, batch_id: 7 })._meta).toEqual({
      [RESULT_REFS_META]: { session_id: 's-2' },
    });
    expect(toToolResult('plain text')).not.toHaveProperty('_meta');
  });

  it('carries the ids of a tool failure too', () => {
    const result = toToolResult(new ToolFailure({ success: false, error: 'x', session_id: 's-3' }));
    expect(result.isError).toBe(true);
    expect(resultRefs(result)).toEqual({ session_id: 's-3' });
  });

  it('keeps other _meta entries when adding refs', () => {
    expect(withRefs({ content: [], _meta: { other: 1 } }, { job_id: 'j_2' })._meta).toEqual({
      other: 1,
      [RESULT_REFS_META]: { job_id: 'j_2' },
    });
  });

  it('reads nothing from results without refs or with malformed ones (upstream results are untrusted)', () => {
    expect(resultRefs(undefined)).toEqual({});
    expect(resultRefs({ content: [] })).toEqual({});
    expect(resultRefs({ _meta: { [RESULT_REFS_META]: { session_id: 42 } } })).toEqual({});
    expect(resultRefs({ _meta: { [RESULT_REFS_META]: { session_id: 'x'.repeat(513) } } })).toEqual({});
  });

  it('recognises execute_{name}_code and nothing else as the code tool', () => {
    expect(isExecuteTool('execute_demo_code')).toBe(true);
    expect(isExecuteTool('execute_science-hub_code')).toBe(true);
    expect(isExecuteTool('execute__code')).toBe(false);
    expect(isExecuteTool('demo_check_job')).toBe(false);
    expect(isExecuteTool('xexecute_demo_code')).toBe(false);
  });
});
