#!/usr/bin/env bash
# Rolling update of the compose workers: replaces every running worker container, one at a time,
# so the cluster never has fewer workers taking jobs than it had (infra/README.md, "Rolling
# worker updates"). For each old worker: one new worker is started from the service's current
# image and configuration (`up --no-recreate --scale worker=N+1`) and must turn healthy (its
# sandbox probe passed); then the old one is stopped with SIGTERM (it drains: no new job, its
# runs finish within OVERSEER_WORKER_DRAIN_MS or go back to the queue) and removed with its
# anonymous volume (no leftover volume; the new worker fetches its own mirrors).
#
#   docker compose build worker && scripts/rolling-update.sh            # from the repository root
#   COMPOSE="docker-compose -p NAME -f docker-compose.yml -f override.yml" scripts/rolling-update.sh
#
# Settings (environment): COMPOSE (default `docker compose`, else `docker-compose`),
# OVERSEER_WORKER_STOP_GRACE (seconds docker waits for the drain, default 45, as in
# docker-compose.yml), OVERSEER_ROLLING_HEALTH_TIMEOUT (seconds a new worker has to turn
# healthy, default 180; the update stops there, leaving the old worker running).
set -euo pipefail

if [ -n "${COMPOSE:-}" ]; then
  read -r -a compose <<<"$COMPOSE"
elif docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
else
  compose=(docker-compose)
fi
grace=${OVERSEER_WORKER_STOP_GRACE:-45}
grace=${grace%s}
health_timeout=${OVERSEER_ROLLING_HEALTH_TIMEOUT:-180}

log() { printf '[rolling-update %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

running_workers() { "${compose[@]}" ps -q worker | while read -r id; do
  [ "$(docker inspect --format '{{.State.Running}}' "$id")" = "true" ] && echo "$id"
done; }

mapfile -t old < <(running_workers)
[ ${#old[@]} -gt 0 ] || { log "no running worker: nothing to update"; exit 0; }
log "${#old[@]} worker(s) to replace, one at a time (drain grace ${grace}s)"

for id in "${old[@]}"; do
  before=$(running_workers | sort)
  count=$(echo "$before" | grep -c .)
  "${compose[@]}" up -d --no-deps --no-recreate --scale "worker=$((count + 1))" worker >/dev/null 2>&1
  new=$(comm -13 <(echo "$before") <(running_workers | sort) | head -n 1)
  [ -n "$new" ] || { log "FAILED: no new worker container started"; exit 1; }
  deadline=$(($(date +%s) + health_timeout))
  until [ "$(docker inspect --format '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$new")" = "healthy" ]; do
    if [ "$(date +%s)" -ge "$deadline" ] || [ "$(docker inspect --format '{{.State.Running}}' "$new")" != "true" ]; then
      log "FAILED: new worker ${new:0:12} not healthy within ${health_timeout}s; ${id:0:12} keeps running"
      exit 1
    fi
    sleep 1
  done
  log "new worker ${new:0:12} healthy; draining ${id:0:12}"
  docker stop -t "$grace" "$id" >/dev/null
  code=$(docker inspect --format '{{.State.ExitCode}}' "$id")
  docker rm -v "$id" >/dev/null
  log "worker ${id:0:12} drained (exit $code) and removed with its volume"
done
log "done: $(running_workers | wc -l) worker(s) on the current image"
