import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxConfigSchema, type KernelSettings, type SandboxConfig } from '@stoa/kernel';
import { testSandbox } from './sandbox';

/** {@link testSandbox} as KernelService settings (kernel-level tests), with the development fallback allowed. */
export function testKernelSandbox(): { sandbox: SandboxConfig; allowSandboxFallback: boolean } {
  return { sandbox: sandboxConfigSchema.parse(testSandbox()), allowSandboxFallback: true };
}

/**
 * KernelService settings of the kernel-level tests: `python3`, an empty environment, a 20 s start timeout,
 * {@link testKernelSandbox} and a fresh data dir; `over` wins.
 */
export function testKernelSettings(over: Partial<KernelSettings> = {}): KernelSettings {
  return {
    python: 'python3',
    env: {},
    passthroughEnv: [],
    startTimeoutMs: 20_000,
    ...testKernelSandbox(),
    ...over,
    dataDir: over.dataDir ?? mkdtempSync(join(tmpdir(), 'stoa-kernels-')),
  };
}
