#!/usr/bin/env bash
# `npm run test:deploy`: the real deployment, end to end. Builds the image (infra/Dockerfile),
# brings up docker-compose.yml with two workers (override infra/compose.test.yml: host network,
# test ports), then test/deploy/compose-cluster.e2e.ts drives a project through the gateway,
# SIGKILLs a worker container and restarts the Postgres container mid-run, and checks every
# task landed exactly once. Everything it started is removed at the end, on failure too.
#
# Needs root and apt (installs docker.io, docker-compose and debootstrap when missing). Starts
# dockerd (--bridge=none --iptables=false) when none answers and stops it afterwards. No image
# registry is needed: a Debian base is made with debootstrap and imported, the Node base gets
# the host's node and npm, and Postgres/Redis stand-ins come from Debian packages. Base images
# are cached by tag across runs (OVERSEER_TEST_REBUILD_BASE=1 rebuilds them).
#
# Settings (environment): OVERSEER_TEST_PG_PORT (55432), OVERSEER_TEST_REDIS_PORT (56379),
# OVERSEER_TEST_GATEWAY_PORT (57070), OVERSEER_TEST_REGISTRY_PORT (55000), DEBIAN_MIRROR (read from the apt sources),
# OVERSEER_TEST_KEEP=1 (leave the cluster up for inspection; dockerd keeps running).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
STARTED_AT=$(date +%s)

log() { printf '[test:deploy +%ss] %s\n' "$(($(date +%s) - STARTED_AT))" "$*"; }
die() {
  log "FAILED: $*"
  exit 1
}

export OVERSEER_TEST_PG_PORT=${OVERSEER_TEST_PG_PORT:-55432}
export OVERSEER_TEST_REDIS_PORT=${OVERSEER_TEST_REDIS_PORT:-56379}
export OVERSEER_TEST_GATEWAY_PORT=${OVERSEER_TEST_GATEWAY_PORT:-57070}
# The project-image case's docker-registry on loopback (the workers name it insecure).
export OVERSEER_TEST_REGISTRY_PORT=${OVERSEER_TEST_REGISTRY_PORT:-55000}
export POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-overseer-test}
PROJECT_NAME=overseer-deploy-test
# Base image tags carry a hash of the files they are built from, so an edited recipe rebuilds.
recipe() { cat "$@" | sha256sum | cut -c1-10; }
DEBIAN_IMAGE=overseer-test-debian:bookworm
NODE_IMAGE="overseer-test-node:$(node --version | tr -d v)-$(recipe infra/test/node.Dockerfile)"
export OVERSEER_POSTGRES_IMAGE="overseer-test-postgres:15-$(recipe infra/test/postgres.Dockerfile infra/test/postgres-entrypoint.sh)"
export OVERSEER_REDIS_IMAGE="overseer-test-redis:7-$(recipe infra/test/redis.Dockerfile)"
export OVERSEER_IMAGE=overseer:test
# A real agent CLI baked in with the AGENT_CLIS build arg (infra/README.md, "Agent CLIs in the
# image"): Gemini CLI, one bundled package of 21 MB; Codex's Linux binary alone is 172 MB.
export OVERSEER_TEST_AGENT_CLIS=${OVERSEER_TEST_AGENT_CLIS:-@google/gemini-cli@0.61.0}
export OVERSEER_BASE_IMAGE=$NODE_IMAGE

[ "$(id -u)" = "0" ] || die "needs root (apt, dockerd)"

# --- tools ------------------------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 || missing+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
# The project-image case: its registry, and the images suite's image builder (test/images).
for tool in skopeo umoci docker-registry; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if docker compose version >/dev/null 2>&1; then
  COMPOSE=(docker compose)
else
  COMPOSE=(docker-compose)
fi
compose_version=$("${COMPOSE[@]}" version 2>/dev/null | head -n 1 || true)
COMPOSE+=(-p "$PROJECT_NAME" -f docker-compose.yml -f infra/compose.test.yml)
log "compose: ${COMPOSE[*]} ($compose_version)"

WORK=$(mktemp -d /tmp/overseer-test-deploy.XXXXXX)
chmod 0755 "$WORK"
export OVERSEER_TEST_REPOS="$WORK/repos"
mkdir -p "$OVERSEER_TEST_REPOS"
DOCKERD_PID=""

# --- cleanup (always) -------------------------------------------------------------------------
cleanup() {
  local status=$?
  set +e
  if [ "$status" != "0" ] && docker info >/dev/null 2>&1; then
    log "diagnostics: containers and the last log lines of each service"
    "${COMPOSE[@]}" ps 2>&1 | sed 's/^/  /'
    for service in migrate coordinator gateway worker postgres redis; do
      "${COMPOSE[@]}" logs --no-color --tail=40 "$service" 2>&1 | sed "s/^/  [$service] /"
    done
  fi
  if [ "${OVERSEER_TEST_KEEP:-0}" = "1" ]; then
    log "OVERSEER_TEST_KEEP=1: cluster left up (${COMPOSE[*]} down -v to remove it)"
  else
    if docker info >/dev/null 2>&1; then
      log "tearing down the cluster"
      timeout 180 "${COMPOSE[@]}" down -v --remove-orphans -t 10 >/dev/null 2>&1 ||
        log "compose down did not finish cleanly"
      # `down -v` must leave no volume behind (the workers' anonymous ones included, also those
      # of workers the rolling update replaced).
      if [ "$status" = "0" ] && [ -f "$WORK/volumes-before" ]; then
        leftover=$(docker volume ls -q | sort | comm -13 "$WORK/volumes-before" -)
        if [ -n "$leftover" ]; then
          log "FAILED: volumes left after down -v: $(echo "$leftover" | tr '\n' ' ')"
          status=1
        else
          log "no volume left after down -v"
        fi
      fi
    fi
    if [ -n "$DOCKERD_PID" ]; then
      log "stopping the dockerd this run started (pid $DOCKERD_PID)"
      kill "$DOCKERD_PID" 2>/dev/null
      for _ in $(seq 1 120); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.5; done
      kill -0 "$DOCKERD_PID" 2>/dev/null && kill -9 "$DOCKERD_PID" 2>/dev/null
    fi
  fi
  rm -rf "$WORK"
  log "$([ "$status" = "0" ] && echo PASSED || echo "FAILED (exit $status)") in $(($(date +%s) - STARTED_AT)) s"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits until "$@" succeeds, polling every second, up to $1 seconds; $2 names the condition.
wait_until() {
  local timeout=$1 what=$2
  shift 2
  local deadline=$(($(date +%s) + timeout))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || die "timed out after ${timeout}s waiting for $what"
    sleep 1
  done
}

# --- dockerd ----------------------------------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
  log "starting dockerd (--bridge=none --iptables=false; log /tmp/overseer-test-dockerd.log)"
  dockerd --bridge=none --iptables=false >/tmp/overseer-test-dockerd.log 2>&1 &
  DOCKERD_PID=$!
  wait_until 120 "dockerd to answer" docker info
fi
log "dockerd $(docker version --format '{{.Server.Version}}' 2>/dev/null)"

# A previous run that was killed may have left its cluster behind.
"${COMPOSE[@]}" down -v --remove-orphans -t 5 >/dev/null 2>&1 || true

# --- base images (cached by tag) ----------------------------------------------------------------
have_image() { [ "${OVERSEER_TEST_REBUILD_BASE:-0}" != "1" ] && docker image inspect "$1" >/dev/null 2>&1; }

debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then
    echo "$DEBIAN_MIRROR"
    return
  fi
  local uri
  uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -v '^\s*#' | grep -oE '(https?://[^ ]+/debian)/?( |$)' | head -n 1 | tr -d ' ' || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

if ! have_image "$DEBIAN_IMAGE"; then
  mirror=$(debian_mirror)
  log "building $DEBIAN_IMAGE: debootstrap --variant=minbase bookworm from $mirror"
  rootfs="$WORK/rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 ||
    { tail -n 20 "$WORK/debootstrap.log"; die "debootstrap failed"; }
  security=${mirror%/debian}/debian-security
  cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' - "$DEBIAN_IMAGE" >/dev/null
  rm -rf "$rootfs"
fi

if ! have_image "$NODE_IMAGE"; then
  log "building $NODE_IMAGE (the host's node $(node --version) and npm $(npm --version), the machine's CA certificates)"
  ctx="$WORK/node-context"
  mkdir -p "$ctx/ca-certificates"
  cp "$(readlink -f "$(command -v node)")" "$ctx/node"
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  cp -a "$npm_dir" "$ctx/npm"
  cp /usr/local/share/ca-certificates/*.crt "$ctx/ca-certificates/" 2>/dev/null || true
  docker build --network host -q -f infra/test/node.Dockerfile --build-arg DEBIAN_IMAGE="$DEBIAN_IMAGE" \
    -t "$NODE_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
fi

for kind in postgres redis; do
  image_var="OVERSEER_$(echo "$kind" | tr a-z A-Z)_IMAGE"
  image=${!image_var}
  if ! have_image "$image"; then
    log "building $image (Debian packages)"
    docker build --network host -q -f "infra/test/$kind.Dockerfile" --build-arg DEBIAN_IMAGE="$DEBIAN_IMAGE" \
      -t "$image" infra/test >/dev/null
  fi
done

# --- the project image ------------------------------------------------------------------------
build_started=$(date +%s)
log "building $OVERSEER_IMAGE from infra/Dockerfile (BASE_IMAGE=$NODE_IMAGE)"
docker build --network host -f infra/Dockerfile --build-arg BASE_IMAGE="$NODE_IMAGE" \
  --build-arg AGENT_CLIS="$OVERSEER_TEST_AGENT_CLIS" \
  --build-arg REVISION="$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
  --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  -t "$OVERSEER_IMAGE" . >"$WORK/build.log" 2>&1 || { tail -n 40 "$WORK/build.log"; die "docker build failed"; }
log "image built in $(($(date +%s) - build_started)) s, $(docker image inspect "$OVERSEER_IMAGE" --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}')"

# --- the cluster ------------------------------------------------------------------------------
docker volume ls -q | sort >"$WORK/volumes-before"
log "compose up: postgres, redis, migrate, coordinator, gateway, 2 workers"
"${COMPOSE[@]}" up -d --no-build --scale worker=2 >"$WORK/up.log" 2>&1 || { cat "$WORK/up.log"; die "compose up failed"; }

all_healthy() {
  local ids id state
  ids=$("${COMPOSE[@]}" ps -q coordinator gateway worker postgres redis)
  [ "$(echo "$ids" | grep -c .)" -ge 6 ] || return 1
  for id in $ids; do
    state=$(docker inspect --format '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id")
    [ "$state" = "healthy" ] || return 1
  done
}
wait_until 300 "every service container to be healthy" all_healthy
log "cluster healthy: $("${COMPOSE[@]}" ps -q | wc -l) containers"

# --- the scenario -----------------------------------------------------------------------------
export OVERSEER_DEPLOY_COMPOSE="${COMPOSE[*]}"
export OVERSEER_DEPLOY_GATEWAY_URL="http://127.0.0.1:$OVERSEER_TEST_GATEWAY_PORT"
export OVERSEER_DEPLOY_DATABASE_URL="postgres://postgres:$POSTGRES_PASSWORD@127.0.0.1:$OVERSEER_TEST_PG_PORT/overseer"
log "running test/deploy/compose-cluster.e2e.ts"
npx vitest run --config vitest.deploy.config.ts
