#!/usr/bin/env bash
# Builds the images for real and runs one execute through a containerised router network:
#   Debian bases (mmdebstrap, cached by input hash) → stoa-executor + stoa-router → the executor image without
#   the runtime settings refuses with exit 78 → the router network of docker/compose (demo + science executors,
#   router, their config files; SQLite and in-process jobs) started with `docker run` → the Python MCP client runs
#   code on both executors through the router → removed. One executor runs with the compose files' settings
#   (root + SYS_ADMIN, which its entrypoint drops; compose cannot pass systempaths, docker/compose#9505), the other
#   with docker run's; the compose-style one must keep no root and no capability.
# STOA_SMOKE_START_DOCKERD=1 starts dockerd (as root) when no daemon answers, and stops it again at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
step() { echo "[docker-smoke $((SECONDS - started)) s] $*"; }

need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v dockerd >/dev/null || need+=(docker.io)
command -v docker-compose >/dev/null || need+=(docker-compose)
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

dockerd_pid=
net=stoa-smoke-$$
containers=()
cleanup() {
  local rc=$?
  for c in "${containers[@]}"; do
    [ $rc -eq 0 ] || { echo "--- $c"; docker logs --tail=60 "$c" 2>&1; } || true
    docker rm -f -v "$c" >/dev/null 2>&1 || true
  done
  docker network rm "$net" >/dev/null 2>&1 || true
  if [ -n "$dockerd_pid" ]; then kill "$dockerd_pid" 2>/dev/null && wait "$dockerd_pid" 2>/dev/null || true; fi
  exit $rc
}
trap cleanup EXIT

if ! docker info >/dev/null 2>&1; then
  if [ "${STOA_SMOKE_START_DOCKERD:-0}" != 1 ]; then
    echo "No Docker daemon answers: start one (dockerd &) or set STOA_SMOKE_START_DOCKERD=1." >&2
    exit 1
  fi
  step "starting dockerd"
  dockerd >/tmp/stoa-smoke-dockerd.log 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { tail -20 /tmp/stoa-smoke-dockerd.log >&2; echo "dockerd did not start" >&2; exit 1; }
fi

step "base images"
bash docker/build-base.sh runtime science build
step "application images"
bash docker/build-images.sh executor router

step "the executor refuses to start without the runtime settings (exit 78)"
set +e
refusal=$(docker run --rm stoa-executor 2>&1)
code=$?
set -e
if [ $code -ne 78 ] || ! grep -q 'systempaths=unconfined' <<<"$refusal"; then
  echo "expected exit 78 naming the runtime settings, got $code: $refusal" >&2
  exit 1
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
router_port=$(free_port)
compose_dir=$PWD/docker/compose/config
step "router network: demo, science, router"
docker network create "$net" >/dev/null
# demo with the compose files' settings (root + SYS_ADMIN, dropped by the entrypoint), science with docker run's.
runtime_demo=(--user 0:0 --cap-add SYS_ADMIN --security-opt seccomp=unconfined --security-opt apparmor=unconfined)
runtime_science=(--security-opt seccomp=unconfined --security-opt systempaths=unconfined)
for name in demo science; do
  declare -n runtime="runtime_$name"
  docker run -d --name "$net-$name" --network "$net" --network-alias "$name" "${runtime[@]}" \
    -e STOA_ALLOW_UNAUTHENTICATED_REMOTE=1 -v "$compose_dir/$name.yaml:/etc/stoa/server.yaml:ro" \
    stoa-executor --config /etc/stoa/server.yaml >/dev/null
  containers+=("$net-$name")
done
docker run -d --name "$net-router" --network "$net" -p "127.0.0.1:$router_port:8100" \
  -e STOA_ALLOW_UNAUTHENTICATED_REMOTE=1 -v "$compose_dir/router.yaml:/etc/stoa/router.yaml:ro" stoa-router >/dev/null
containers+=("$net-router")
for c in "${containers[@]}"; do
  for _ in $(seq 1 120); do
    status=$(docker inspect -f '{{.State.Health.Status}}' "$c" 2>/dev/null || echo missing)
    [ "$status" = healthy ] && break
    sleep 1
  done
  [ "$status" = healthy ] || { echo "$c is $status after 120 s" >&2; exit 1; }
done
for _ in $(seq 1 60); do curl -sf "http://127.0.0.1:$router_port/health/ready" >/dev/null && break; sleep 1; done

if [ ! -x .test-venv/bin/python ] || ! .test-venv/bin/python -c 'import mcp, httpx2' 2>/dev/null; then
  step "creating .test-venv (Python mcp client)"
  python3 -m venv --clear .test-venv
  index=(); [ -d /opt/pypi/simple ] && [ -z "${PIP_INDEX_URL:-}" ] && index=(--index-url file:///opt/pypi/simple)
  .test-venv/bin/pip install --quiet "${index[@]}" 'mcp>=2.3,<2.4'
fi

step "execute through the router with the Python MCP client"
plan=$(printf '{"url": "http://127.0.0.1:%s/mcp", "mode": "auto", "calls": [
  {"tool": "execute_demo_code", "args": {"code": "import os\\nprint(6 * 7, os.getuid())"}},
  {"tool": "execute_science_code", "args": {"code": "import numpy as np\\nprint(int(np.arange(10).sum()))"}}]}' \
  "$router_port")
result=$(.test-venv/bin/python test/clients/py_mcp_client.py <<<"$plan")
python3 - "$result" <<'PY'
import json, sys
demo, science = (r["json"] for r in json.loads(sys.argv[1]))
assert demo["success"] and demo["stdout"].startswith("42 "), demo
assert science["success"] and science["stdout"].strip() == "45", science
print("demo:", demo["stdout"].strip(), "| science:", science["stdout"].strip())
PY
step "the compose-style executor kept no root and no capability (every process: uid 10001, CapBnd 0)"
# `docker exec` itself runs as the container's user (root here): list the processes that are not this probe.
procs=$(docker exec "$net-demo" sh -c 'for p in /proc/[0-9]*; do [ "${p#/proc/}" = $$ ] && continue
  u=$(grep ^Uid: "$p/status" 2>/dev/null | cut -f2); b=$(grep ^CapBnd: "$p/status" 2>/dev/null | cut -f2)
  [ -n "$u" ] && echo "$(cat "$p/comm") $u $b"; done' | grep -vE '^(sh|cat|grep|cut) ' || true)
echo "$procs" | sort | uniq -c
if ! grep -q '^node 10001 ' <<<"$procs" || grep -vq ' 10001 0000000000000000$' <<<"$procs"; then
  echo "a process of the compose-style executor kept root or a capability" >&2
  exit 1
fi
step "passed"
