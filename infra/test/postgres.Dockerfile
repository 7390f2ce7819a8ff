# Test-only stand-in for the official postgres image (`npm run test:deploy` has no registry):
# Debian's PostgreSQL with an entrypoint that honours the same POSTGRES_PASSWORD, POSTGRES_DB
# and PGDATA, plus PGPORT and POSTGRES_LISTEN for the test's host-network ports.
ARG DEBIAN_IMAGE
FROM ${DEBIAN_IMAGE}
RUN mkdir -p /etc/postgresql-common \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confold postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
# Like the official image: SIGINT is a fast shutdown (SIGTERM would wait for every client).
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]
