#!/bin/sh
# The executor image runs kernels in bubblewrap. bubblewrap needs a user namespace and a fresh /proc, which the
# default container profile forbids (seccomp refuses unshare/clone(CLONE_NEWUSER); masked /proc paths make the
# proc mount fail). Check once at start, and stop with EX_CONFIG (78) and the settings to use instead of serving
# an executor whose every kernel would fail.
if [ "${STOA_SKIP_SANDBOX_CHECK:-0}" != 1 ] && ! err=$(bwrap --unshare-all --die-with-parent --ro-bind / / \
    --proc /proc --dev /dev --tmpfs /tmp true 2>&1); then
  cat >&2 <<MSG
stoa-executor: bubblewrap cannot create the kernel sandbox in this container: ${err}
Run the container with user namespaces allowed:
  docker run --security-opt seccomp=unconfined --security-opt systempaths=unconfined [--security-opt apparmor=unconfined] …
  (compose: security_opt: [seccomp=unconfined, systempaths=unconfined]; Kubernetes: securityContext
   seccompProfile: Unconfined, procMount: Unmasked — see README "Deploy").
The host must allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1,
user.max_user_namespaces > 0). STOA_SKIP_SANDBOX_CHECK=1 skips this check for servers that do not use bubblewrap.
MSG
  exit 78
fi
exec node /app/dist/apps/executor/main.js "$@"
