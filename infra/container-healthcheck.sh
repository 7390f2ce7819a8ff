#!/bin/sh
# HEALTHCHECK of the Overseer image: the liveness probe of the service this container runs
# (`node dist/healthcheck.js coordinator|gateway|worker`: the service's heartbeat is fresh).
# The service is read from PID 1's command line (tini -- node dist/<service>.js); a container
# running something else (the CLI, a one-shot migration) has nothing to probe and is healthy.
# Run as root (the compose worker starts as root), the probe drops to `overseer` first.
set -eu
service=$(tr '\0' '\n' </proc/1/cmdline | sed -n 's#^\(/opt/overseer/\)\{0,1\}dist/\(coordinator\|gateway\|worker\)\.js$#\2#p' | head -n 1)
[ -n "$service" ] || exit 0
cd /opt/overseer
if [ "$(id -u)" = "0" ]; then
  exec setpriv --reuid="$(id -u overseer)" --regid="$(id -g overseer)" --clear-groups \
    --inh-caps=-all --bounding-set=-all --no-new-privs node dist/healthcheck.js "$service"
fi
exec node dist/healthcheck.js "$service"
