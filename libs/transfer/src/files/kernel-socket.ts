import { randomBytes } from 'node:crypto';
import { chmod, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { giveToKernel, type KernelDirs } from '@stoa/kernel';
import { kernelDir } from './kernel-files';

/** Longest unix socket path Linux takes is 107 bytes; a longer one falls back to a file. */
const MAX_SOCKET_PATH = 100;

/**
 * A one-connection unix socket in the kernel's inbox (server-owned; group = the kernel's uid, mode 0660), so an
 * object travels between the kernel and the host as a stream instead of a file written and read back. Only the
 * session's kernel (and the server) can reach it; the first connection is the only one accepted (the server stops
 * listening when it arrives), and the socket's name is removed once that connection ends, or at `close`.
 */
export class KernelSocket {
  /** The first (and only) connection. */
  readonly connection: Promise<Socket>;
  private socket?: Socket;

  private constructor(
    readonly path: string,
    private readonly server: Server,
  ) {
    this.connection = new Promise((resolve) => {
      server.once('connection', (s: Socket) => {
        this.socket = s;
        void this.unlisten();
        resolve(s);
      });
    });
  }

  /** A listening socket for `dirs`' kernel, or undefined when its path would be too long for a unix socket. */
  static async open(dirs: KernelDirs, prefix: string): Promise<KernelSocket | undefined> {
    const dir = await kernelDir(dirs, 'streams');
    const path = join(dir, `${prefix}-${randomBytes(8).toString('hex')}.sock`);
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) return undefined;
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const socket = new KernelSocket(path, server);
    try {
      await giveToKernel(path, dirs);
      await chmod(path, 0o660); // connecting needs write permission on the socket
    } catch (err) {
      await socket.close();
      throw err;
    }
    return socket;
  }

  /** Stops listening and ends the connection (if any); the socket's name is removed. Safe to call twice. */
  async close(): Promise<void> {
    this.socket?.destroy();
    await this.unlisten();
  }

  private async unlisten(): Promise<void> {
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.path, { force: true });
  }
}
