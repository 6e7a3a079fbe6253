import { dirname } from 'node:path';
import { SECRET_NAME } from './kernel.config';

/** Host variables a kernel may inherit; everything else is dropped. */
const BASE_ALLOWED = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'OPENBLAS_CORETYPE',
  'OPENBLAS_L2_SIZE',
  'OPENBLAS_NUM_THREADS',
  'OMP_NUM_THREADS',
  'MKL_NUM_THREADS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'LD_LIBRARY_PATH',
  'GLIBC_TUNABLES',
];

/**
 * Large allocations (a 100 MB bytearray, a read of a big file, an unpickled buffer) take transparent huge pages
 * where the host offers them in `madvise` mode: the kernel then faults a large buffer in 2 MiB steps instead of 4 KiB
 * ones. On a VM where a page fault costs microseconds this is 10–15x (reading a 100 MB file into a new buffer:
 * 340 → 20 ms); idle processes grow by ~0.4 MB. A host that sets GLIBC_TUNABLES itself keeps its own value.
 */
const DEFAULT_GLIBC_TUNABLES = 'glibc.malloc.hugetlb=1';

export interface KernelEnvInput {
  host: NodeJS.ProcessEnv;
  pythonExecutable: string;
  passthrough: readonly string[];
  extra: Readonly<Record<string, string>>;
  session: Readonly<Record<string, string>>;
}

/** Builds a kernel environment from an allow-list: server secrets never reach user code. */
export function buildKernelEnv(input: KernelEnvInput): Record<string, string> {
  const env: Record<string, string> = { GLIBC_TUNABLES: DEFAULT_GLIBC_TUNABLES };
  for (const name of [...BASE_ALLOWED, ...input.passthrough]) {
    const value = input.host[name];
    if (value !== undefined && !SECRET_NAME.test(name)) env[name] = value;
  }
  const bin = dirname(input.pythonExecutable);
  env.PATH = env.PATH ? `${bin}:${env.PATH}` : bin;
  Object.assign(env, {
    PYTHONUNBUFFERED: '1',
    PYTHONIOENCODING: 'utf-8',
    MPLBACKEND: 'Agg',
  });
  Object.assign(env, input.extra, input.session);
  return env;
}
