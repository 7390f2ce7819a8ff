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
fi

uid=$(id -u "$user")
gid=$(id -g "$user")
HOME=$(getent passwd "$user" | cut -d: -f6)
USER=$user
export HOME USER
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups \
  --inh-caps=-all --bounding-set=-all --no-new-privs \
  /usr/bin/tini -- "$@"
