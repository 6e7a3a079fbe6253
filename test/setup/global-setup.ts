import { execFileSync, execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ROOT, TEST_PYTHON, TEST_VENV } from '../support/paths';

/**
 * e2e prerequisites: a fresh build of the apps and a venv with the Python `mcp` client, the official Prometheus
 * client (its text-format parser reads /metrics) and matplotlib (the dashboard test's kernels plot with it; the
 * pyenv `python3` has numpy only), from the local wheel index.
 */
export default function setup(): void {
  execSync('npm run build', { cwd: ROOT, stdio: 'inherit' });
  if (!existsSync(TEST_PYTHON) || !hasMcp()) {
    execFileSync('python3', ['-m', 'venv', '--clear', TEST_VENV], { stdio: 'inherit' });
    execFileSync(TEST_PYTHON, ['-m', 'pip', 'install', '--quiet', 'mcp>=2.3,<2.4', 'prometheus-client', 'matplotlib'], {
      stdio: 'inherit',
      env: pipEnv(),
    });
  }
}

function hasMcp(): boolean {
  try {
    execFileSync(TEST_PYTHON, ['-c', 'import mcp, httpx2, prometheus_client, matplotlib'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Machines without registry access carry a local simple index; prefer it so pip does not wait on the network. */
function pipEnv(): NodeJS.ProcessEnv {
  const local = '/opt/pypi/simple';
  if (process.env.PIP_INDEX_URL || !existsSync(local)) return process.env;
  return { ...process.env, PIP_INDEX_URL: `file://${local}` };
}
