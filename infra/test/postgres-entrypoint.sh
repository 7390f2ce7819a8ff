#!/bin/sh
# Test-only Postgres entrypoint (infra/test/postgres.Dockerfile): first start initialises
# PGDATA with POSTGRES_PASSWORD (password auth over TCP) and creates POSTGRES_DB; every start
# then runs the server as `postgres` on PGPORT (5432) and POSTGRES_LISTEN (*).
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
PGDATA=${PGDATA:-/var/lib/postgresql/data}
install -d -o postgres -g postgres -m 0700 "$PGDATA"
install -d -o postgres -g postgres -m 2775 /var/run/postgresql
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  chown postgres "$pwfile"
  setpriv --reuid=postgres --regid=postgres --init-groups \
    initdb -D "$PGDATA" -U postgres --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != "postgres" ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\"" |
      setpriv --reuid=postgres --regid=postgres --init-groups postgres --single -D "$PGDATA" postgres >/dev/null
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups \
  postgres -D "$PGDATA" -p "${PGPORT:-5432}" -c listen_addresses="${POSTGRES_LISTEN:-*}" "$@"
