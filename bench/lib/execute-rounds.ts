import { note } from './bench';
import { connect, type BenchClient } from './mcp';

/** A client with a warm session (`x = 1` set) on one executor or connector. */
export interface ExecuteSubject {
  client: BenchClient;
  session: string;
}

/** Connects to `mcpUrl` and opens a session holding `x = 1`. */
export async function executeSubject(mcpUrl: string): Promise<ExecuteSubject> {
  const client = await connect(mcpUrl);
  const created = JSON.parse(await client.call('execute_demo_code', { code: 'x = 1' })) as { session_id: string };
  return { client, session: created.session_id };
}

/**
 * Times `execute_demo_code("x+1")` on every subject in turn, the order rotated each round so machine noise hits
 * them alike; `warmup` rounds are not kept. Returns the ms of each measured call per subject.
 */
export async function interleavedExecute(
  subjects: Record<string, ExecuteSubject>,
  warmup: number,
  samples: number,
): Promise<Record<string, number[]>> {
  const names = Object.keys(subjects);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  note(`warm-up ${warmup} rounds, then ${samples} measured rounds (${names.join(' / ')}, interleaved)`);
  for (let i = 0; i < warmup + samples; i++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length] as string;
      const { client, session } = subjects[name]!;
      const t0 = performance.now();
      const r = JSON.parse(await client.call('execute_demo_code', { code: 'x+1', execution_session_id: session })) as {
        stdout?: string;
      };
      const ms = performance.now() - t0;
      if (r.stdout !== '2\n') throw new Error(`${name}: unexpected result in round ${i}`);
      if (i >= warmup) times[name]!.push(ms);
    }
  }
  return times;
}
