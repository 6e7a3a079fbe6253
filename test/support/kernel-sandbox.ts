import { sandboxConfigSchema, type SandboxConfig } from '@stoa/kernel';
import { testSandbox } from './sandbox';

/** {@link testSandbox} as KernelService settings (kernel-level tests), with the development fallback allowed. */
export function testKernelSandbox(): { sandbox: SandboxConfig; allowSandboxFallback: boolean } {
  return { sandbox: sandboxConfigSchema.parse(testSandbox()), allowSandboxFallback: true };
}
