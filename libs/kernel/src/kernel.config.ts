import { z } from 'zod';
import { nonNegative } from '@stoa/config';

/** Names that look like secrets never reach a kernel through pass-through. */
export const SECRET_NAME =
  /SECRET|TOKEN|PASSWORD|PASSWD|PWD$|KEY|CREDENTIAL|CONNECTION_STRING|DATABASE_URL|REDIS_URL|^AZURE_/i;

/** The kernel keys of `environment:` in a server YAML (the build keys live in @stoa/provision). */
export const kernelEnvironmentFields = {
  /** Extra variables set in every kernel (written by the operator, so trusted). */
  env: z.record(z.string(), z.string()).default({}),
  /** Server variables copied into kernels by name; secret-looking names are refused. */
  passthrough_env: z
    .array(z.string())
    .default([])
    .refine((names) => names.every((n) => !SECRET_NAME.test(n)), {
      message:
        'passthrough_env names a secret-looking variable (SECRET, TOKEN, PASSWORD, KEY, …); kernels must not see server secrets — set a dedicated value under environment.env instead',
    }),
};

/** Kernel timing knobs (under `execution:`). */
export const kernelTimingSchema = z.strictObject({
  /** After a timeout's SIGINT, how long the kernel may take to yield before it is killed. */
  interrupt_grace_seconds: nonNegative.default(3),
  /** Upper bound for a kernel to start and report ready. */
  start_timeout_seconds: nonNegative.default(30),
});
