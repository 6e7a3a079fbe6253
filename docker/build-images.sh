#!/usr/bin/env bash
# Builds Stoa images from docker/Dockerfile (and PostgreSQL/Redis from docker/services.Dockerfile) on the bases of
# docker/build-base.sh. Usage: bash docker/build-images.sh [executor router gateway dispatcher activity square
# postgres redis]  (default: all). Images are named stoa-<target>; Docker's layer cache makes rebuilds quick.
set -euo pipefail
cd "$(dirname "$0")/.."
# The legacy builder: Debian's docker.io has no buildx plugin, and the stages need nothing BuildKit adds.
export DOCKER_BUILDKIT=0
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(executor router gateway dispatcher activity square postgres redis)
# The host's CA bundle for the build stage's npm ci (STOA_BUILD_CA_FILE: another bundle); removed afterwards.
ca=${STOA_BUILD_CA_FILE:-/etc/ssl/certs/ca-certificates.crt}
[ -r "$ca" ] || { echo "$ca is not readable: set STOA_BUILD_CA_FILE to a CA bundle (PEM)" >&2; exit 2; }
cp "$ca" docker/build-ca.crt
trap 'rm -f docker/build-ca.crt' EXIT
app() { args=(-f docker/Dockerfile --target app --build-arg "STOA_APP=$target" --build-arg "PORT=$1"); }
for target in "${targets[@]}"; do
  case $target in
    postgres | redis) args=(-f docker/services.Dockerfile --target "$target") ;;
    executor) args=(-f docker/Dockerfile --target executor) ;;
    router) app 8100 ;;
    gateway) app 8200 ;;
    dispatcher) app 8300 ;;
    activity) app 8030 ;;
    square) app 8040 ;;
    *) echo "unknown image '$target': use executor, router, gateway, dispatcher, activity, square, postgres or redis" >&2; exit 2 ;;
  esac
  started=$SECONDS
  echo "stoa-$target: docker build ${args[*]} …"
  # Host network: the build stage runs npm ci against the registry whatever the daemon's bridge allows.
  docker build --quiet --network host "${args[@]}" -t "stoa-$target" . >/dev/null
  echo "stoa-$target: built in $((SECONDS - started)) s ($(docker image inspect -f '{{.Size}}' "stoa-$target" | awk '{printf "%d MiB", $1/1048576}'))"
done
