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
];

export interface KernelEnvInput {
  host: NodeJS.ProcessEnv;
  pythonExecutable: string;
  passthrough: readonly string[];
  extra: Readonly<Record<string, string>>;
  session: Readonly<Record<string, string>>;
}

/** Builds a kernel environment from an allow-list: server secrets never reach user code. */
export function buildKernelEnv(input: KernelEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
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
