/**
 * A governed network built in code: two replicas of one executor behind a dispatcher, a gateway with a tool policy in
 * front of the dispatcher, and a coordination square beside them. Build once (`npm run build`), then
 *   npx tsx examples/embedding/governed.ts     # gateway MCP at http://127.0.0.1:8400/mcp, square at :8440/mcp
 * PORT and SQUARE_PORT override the two public ports, STOA_DATA_DIR the data directory of all of them.
 */
import { join, resolve } from 'node:path';
import { createDispatcher, createExecutor, createGateway, createSquare, type StoaServer } from 'stoa';

/** The replicas sign session ids with one key, so the dispatcher routes a session back to the replica holding it. */
const SESSION_KEY = process.env.STOA_SESSION_KEY ?? 'example-governed-session-key-0123';

export interface GovernedNetwork {
  gateway: StoaServer;
  square: StoaServer;
  /** Everything, in the order to close it (front to back). */
  all: StoaServer[];
}

export async function buildGovernedNetwork(): Promise<GovernedNetwork> {
  const dataDir = resolve(process.env.STOA_DATA_DIR ?? './data/embedded-governed');
  const only = { env: { PATH: process.env.PATH } }; // each app its own data dir and port, whatever the shell sets
  const replica = (id: string) =>
    createExecutor(
      {
        name: 'calc',
        description: 'Python for the team, two replicas.',
        data_dir: join(dataDir, id),
        server: { host: '127.0.0.1', port: 0 },
        auth: { mode: 'noop' },
        sandbox: { network: 'none', filesystem: 'host' },
        sessions: { replica: id, id_signing_key: SESSION_KEY },
      },
      {},
      only,
    );
  const replicas = [await replica('r1'), await replica('r2')];
  const urls = [await replicas[0]!.listen(0), await replicas[1]!.listen(0)];
  const dispatcher = await createDispatcher(
    {
      name: 'calc',
      server: { host: '127.0.0.1', port: 0 },
      auth: { mode: 'noop' },
      workers: [
        { name: 'r1', url: urls[0]! },
        { name: 'r2', url: urls[1]! },
      ],
      session_key: SESSION_KEY,
    },
    only,
  );
  const dispatcherUrl = await dispatcher.listen(0);
  const gateway = await createGateway(
    {
      name: 'governed',
      server: { host: '127.0.0.1', port: Number(process.env.PORT ?? 8400) },
      auth: { mode: 'noop' },
      upstream: { name: 'calc', url: `${dispatcherUrl}/mcp` },
      // Agents run code here, but cannot send objects or files out of the network.
      policy: { blocked_tools: ['send'] },
      data_dir: join(dataDir, 'gateway'),
    },
    only,
  );
  const square = await createSquare(
    {
      name: 'square',
      server: { host: '127.0.0.1', port: Number(process.env.SQUARE_PORT ?? 8440) },
      auth: { mode: 'noop' },
      data_dir: join(dataDir, 'square'),
    },
    only,
  );
  return { gateway, square, all: [gateway, square, dispatcher, ...replicas] };
}

if (require.main === module) {
  void (async () => {
    const net = await buildGovernedNetwork();
    const square = await net.square.listen();
    const gateway = await net.gateway.listen();
    process.stdout.write(`embedded gateway: ${gateway}/mcp  square: ${square}/mcp (live view ${square}/live)\n`);
    const stop = async () => {
      for (const s of net.all) await s.close();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
  })();
}
