import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { buildKernelEnv } from './kernel-env';
import { KernelProcess } from './kernel-process';
import { driverPath, resolvePython, type PythonInfo } from './python';
import type { KernelSpawnOptions } from './kernel.types';

/** What the kernel service needs from config. */
export interface KernelSettings {
  python: string;
  env: Readonly<Record<string, string>>;
  passthroughEnv: readonly string[];
  startTimeoutMs: number;
  /** Runs on every new kernel after it is ready (tool proxy injection); a failure fails the start. */
  bootstrap?: (kernel: KernelProcess) => Promise<void>;
}

export const KERNEL_SETTINGS = Symbol('KERNEL_SETTINGS');

/**
 * Starts kernels with the interpreter resolved once at boot and a scrubbed environment, and keeps
 * track of every live kernel so shutdown reaps them all (no orphans).
 */
@Injectable()
export class KernelService implements OnApplicationShutdown {
  private readonly logger = new Logger(KernelService.name);
  private readonly live = new Set<KernelProcess>();
  readonly python: PythonInfo;
  private readonly driver = driverPath();

  constructor(@Inject(KERNEL_SETTINGS) private readonly settings: KernelSettings) {
    this.python = resolvePython(settings.python);
    this.logger.log({ python: this.python.executable, version: this.python.version }, 'kernel interpreter resolved');
    process.once('exit', () => this.killAll());
  }

  /** Starts a kernel and waits until its driver is ready. */
  async start(opts: KernelSpawnOptions): Promise<KernelProcess> {
    const env = buildKernelEnv({
      host: process.env,
      pythonExecutable: this.python.executable,
      passthrough: this.settings.passthroughEnv,
      extra: this.settings.env,
      session: opts.env,
    });
    const kernel = new KernelProcess(this.python.executable, this.driver, opts.cwd, env);
    this.live.add(kernel);
    kernel.once('exit', () => this.live.delete(kernel));
    await kernel.waitReady(this.settings.startTimeoutMs);
    if (this.settings.bootstrap) {
      try {
        await this.settings.bootstrap(kernel);
      } catch (err) {
        await kernel.close();
        throw err;
      }
    }
    return kernel;
  }

  /** Number of kernel processes alive now. */
  get liveCount(): number {
    return this.live.size;
  }

  killAll(): void {
    for (const kernel of this.live) kernel.kill();
  }

  async onApplicationShutdown(): Promise<void> {
    const kernels = [...this.live];
    await Promise.all(kernels.map((k) => k.close()));
    if (kernels.length) this.logger.log({ count: kernels.length }, 'kernels reaped on shutdown');
  }
}
