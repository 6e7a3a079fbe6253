#!/bin/sh
# The executor image runs kernels in bubblewrap. bubblewrap needs a user namespace and a fresh /proc, which the
# default container profile forbids (seccomp refuses unshare/clone(CLONE_NEWUSER); masked /proc paths make the
# proc mount fail). Check once at start, and stop with EX_CONFIG (78) and the settings to use instead of serving
# an executor whose every kernel would fail.
#
# Started as root with CAP_SYS_ADMIN (compose: user: "0:0", cap_add: [SYS_ADMIN] — compose cannot pass
# systempaths=unconfined, docker/compose#9505), it first lifts the runtime's masks over /proc itself, then drops to
# uid 10001 with an empty capability bounding set before anything else starts (tini included): no process of the
# container keeps root or a capability, and nothing the app or a kernel runs can regain one.
if [ "$(id -u)" = 0 ]; then
  awk '$5 ~ /^\/proc\// { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
  exec setpriv --reuid=10001 --regid=10001 --clear-groups --bounding-set=-all --inh-caps=-all \
    env HOME=/home/stoa /usr/bin/tini -- "$0" "$@"
fi
# PID 1 (the image's entrypoint, not yet under tini): tini reaps the kernels' orphans and forwards signals.
[ $$ = 1 ] && exec /usr/bin/tini -- "$0" "$@"
if [ "${STOA_SKIP_SANDBOX_CHECK:-0}" != 1 ] && ! err=$(bwrap --unshare-all --die-with-parent --ro-bind / / \
    --proc /proc --dev /dev --tmpfs /tmp true 2>&1); then
  cat >&2 <<MSG
stoa-executor: bubblewrap cannot create the kernel sandbox in this container: ${err}
Run the container with user namespaces allowed:
  docker run --security-opt seccomp=unconfined --security-opt systempaths=unconfined [--security-opt apparmor=unconfined] …
  (compose, which cannot pass systempaths: security_opt: [seccomp=unconfined, apparmor=unconfined], user: "0:0",
   cap_add: [SYS_ADMIN] — the entrypoint lifts the /proc masks, then drops to uid 10001 without capabilities;
   Kubernetes: securityContext seccompProfile: Unconfined, procMount: Unmasked — see README "Deploy").
The host must allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1,
user.max_user_namespaces > 0). STOA_SKIP_SANDBOX_CHECK=1 skips this check for servers that do not use bubblewrap.
MSG
  exit 78
fi
exec node /app/dist/apps/executor/main.js "$@"
