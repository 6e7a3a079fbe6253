#!/usr/bin/env bash
# The README's promise on a fresh machine, checked on a machine that has the extras: bubblewrap is masked in a
# private mount namespace (root only), the interpreter sits under a directory other users cannot enter, and
# then the demo must start, serve a real Python MCP client (both protocol eras) and keep a session's state, and
# a kernel-backed e2e subset must pass. CI runs it after `npm test` (which built dist/ and the client venv).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${STOA_FRESH_INNER:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "fresh-machine check: needs root (a mount namespace masks bubblewrap)" >&2; exit 1; }
  python=$(python3 -c 'import sys; print(sys.executable)')
  closed=$(node -e 'const fs=require("fs"),p=require("path");let d=p.dirname(process.argv[1]);const c=[];for(;;){c.unshift(d);if(p.dirname(d)===d)break;d=p.dirname(d)}console.log(c.find(x=>(fs.statSync(x).mode&1)===0)||"")' "$python")
  if [ -z "$closed" ]; then
    echo "fresh-machine check: $python is reachable by every user here, so the 0700-home case is not exercised; run it on a machine whose python3 lives under a closed home (this project's machine kind: pyenv under /root)" >&2
    exit 1
  fi
  echo "fresh-machine check: interpreter $python under closed $closed; masking bubblewrap"
  bwrap_path=$(command -v bwrap || echo /usr/bin/bwrap)
  if [ -e "$bwrap_path" ]; then
    exec unshare -m --propagation private env STOA_FRESH_INNER=1 BWRAP_PATH="$bwrap_path" bash -c 'mount --bind /dev/null "$BWRAP_PATH" && exec bash "$0"' "$0"
  fi
  export STOA_FRESH_INNER=1
fi

if bwrap --version >/dev/null 2>&1; then echo "fresh-machine check: bubblewrap still runs; masking failed" >&2; exit 1; fi
data=$(mktemp -d /tmp/stoa-fresh-XXXXXX)
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
log="$data/executor.log"
STOA_DATA_DIR="$data" PORT="$port" node dist/apps/executor/main.js --config examples/servers/demo/server.yaml >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 150); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  kill -0 $pid 2>/dev/null || { echo "fresh-machine check: the demo exited:" >&2; tail -n 30 "$log" >&2; exit 1; }
  sleep 0.2
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { echo "fresh-machine check: the demo did not answer /health" >&2; tail -n 30 "$log" >&2; exit 1; }
grep -q "not as one unprivileged uid each" "$log" || { echo "fresh-machine check: the start-up log does not say kernels run as the server's user" >&2; exit 1; }

for mode in legacy auto; do
  out=$(printf '{"url":"http://127.0.0.1:%s/mcp","mode":"%s","calls":[{"tool":"execute_demo_code","args":{"code":"x = 41"}},{"tool":"execute_demo_code","args":{"code":"x + 1","execution_session_id":"{{0.session_id}}"}}]}' "$port" "$mode" |
    .test-venv/bin/python test/clients/py_mcp_client.py)
  echo "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r[1]["json"]["stdout"]=="42\n", r; print("fresh-machine check: python mcp client (%s): x + 1 ->" % sys.argv[1], r[1]["json"]["stdout"].strip())' "$mode"
done
kill $pid; wait $pid 2>/dev/null || true
trap - EXIT

echo "fresh-machine check: kernel-backed e2e subset with bubblewrap masked"
STOA_FRESH_MACHINE=1 npx vitest run --project integration --project e2e \
  libs/kernel/test/kernel.int-spec.ts apps/executor/test/lifecycle.e2e-spec.ts apps/executor/test/transfer-modes.e2e-spec.ts apps/executor/test/noop-loopback.e2e-spec.ts
