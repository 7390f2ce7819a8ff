#!/bin/sh
# Entry point of the Overseer image (infra/Dockerfile): runs the given command under tini as
# the unprivileged `overseer` user.
#
# Started as that user (the image's default USER: coordinator, gateway, CLI), it only execs
# tini. Started as root (the compose worker: `user: "0:0"`, every capability dropped except
# SYS_ADMIN, SETUID, SETGID and SETPCAP) with OVERSEER_PREPARE_BWRAP=1, it first prepares the
# container so bubblewrap can build a run's sandbox, then drops every capability (bounding set
# included), sets no_new_privs and becomes `overseer` before anything else runs:
#
#  1. A fresh procfs at /run/overseer-bwrap/proc, under a root-only (0700) directory the worker
#     cannot enter. The kernel lets an unprivileged user namespace mount a new procfs (bwrap's
#     `--proc /proc`) only when a procfs without covered entries already exists in the mount
#     namespace; Docker covers parts of /proc (kcore, keys, timer_list, sysrq-trigger, ...), so
#     without this mount bwrap fails with "Can't mount proc". The container's own /proc keeps
#     Docker's masks.
#  2. /proc/sys/user re-bound writable (Docker mounts /proc/sys read-only): bwrap's
#     --disable-userns writes user.max_user_namespaces of the run's own user namespace there.
#     Writing these files needs CAP_SYS_RESOURCE over the namespace that owns them, which no
#     process in the container has for the host's.
#
# See infra/README.md (Sandbox inside the worker container).
set -eu

# Replica names: the services default to <hostname>-<pid>, which repeats across replicas that
# share the host's network (and so its hostname) and across restarts of one container (same
# pid). Name them <service>-<container id, 12 hex>-<random per start> instead.
container_id=$(sed -n 's#.*/containers/\([0-9a-f]\{64\}\)/.*#\1#p' /proc/self/mountinfo | head -n 1)
start_nonce=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
replica="$(printf '%.12s' "${container_id:-unknown}")-$start_nonce"
export OVERSEER_WORKER_ID="${OVERSEER_WORKER_ID:-worker-$replica}"
export OVERSEER_COORDINATOR_ID="${OVERSEER_COORDINATOR_ID:-coordinator-$replica}"

if [ "$(id -u)" != "0" ]; then
  exec /usr/bin/tini -- "$@"
fi

user=overseer

# 3. A delegated cgroup for per-run limits (cgroup v1, as Docker 20.10 mounts it on a v1 or hybrid
#    host): the container's pids, memory and cpu hierarchies are re-mounted writable and get one
#    directory, `overseer`, owned by the worker's user, where the worker makes one cgroup per run
#    (pids.max, memory.limit_in_bytes; packages/sandbox cgroup-limits.ts). The container's own
#    cgroup files stay root's, so the worker cannot raise the container's limits, and runs never
#    see /sys. Where this is not possible (cgroup v2 here, or a mount refused) nothing is
#    delegated: the worker then refuses runs unless OVERSEER_ALLOW_UNENFORCED_LIMITS=1.
delegate_cgroups() {
  [ "${OVERSEER_DELEGATE_CGROUP:-1}" = "1" ] || return 0
  if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = "cgroup2fs" ]; then
    echo "overseer-entrypoint: cgroup v2 is not delegated by this entrypoint; per-run limits are refused unless OVERSEER_ALLOW_UNENFORCED_LIMITS=1 (infra/README.md)" >&2
    return 0
  fi
  for controller in pids memory cpu; do
    dir=/sys/fs/cgroup/$controller
    mountpoint -q "$dir" 2>/dev/null || continue
    # mkdir and chmod while root owns it (no CAP_FOWNER here), then hand it over (CAP_CHOWN).
    if mount -o remount,bind,rw,nosuid,nodev,noexec "$dir" 2>/dev/null &&
      mkdir -p "$dir/overseer" && chmod 0755 "$dir/overseer" &&
      chown "$user:$user" "$dir/overseer" 2>/dev/null; then
      :
    else
      echo "overseer-entrypoint: cannot delegate the $controller cgroup ($dir); runs asking for its limit are refused unless OVERSEER_ALLOW_UNENFORCED_LIMITS=1" >&2
      mount -o remount,bind,ro,nosuid,nodev,noexec "$dir" 2>/dev/null || true
    fi
  done
}

if [ "${OVERSEER_PREPARE_BWRAP:-0}" = "1" ]; then
  holder=/run/overseer-bwrap
  if ! mountpoint -q "$holder/proc" 2>/dev/null; then
    install -d -m 0700 -o root -g root "$holder"
    install -d -m 0555 -o root -g root "$holder/proc"
    mount -t proc -o nosuid,nodev,noexec proc "$holder/proc" || {
      echo "overseer-entrypoint: cannot mount a procfs for bubblewrap; the worker container needs cap_add SYS_ADMIN and the seccomp profile infra/seccomp-bwrap.json (see infra/README.md)" >&2
      exit 1
    }
  fi
  mount --bind /proc/sys/user /proc/sys/user
  mount -o remount,bind,rw,nosuid,nodev,noexec /proc/sys/user
  delegate_cgroups
fi

uid=$(id -u "$user")
gid=$(id -g "$user")
HOME=$(getent passwd "$user" | cut -d: -f6)
USER=$user
export HOME USER
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups \
  --inh-caps=-all --bounding-set=-all --no-new-privs \
  /usr/bin/tini -- "$@"
