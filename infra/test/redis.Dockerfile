# Test-only stand-in for the official redis image (`npm run test:deploy` has no registry):
# Debian's redis-server and redis-cli on PATH; the compose file gives the command line.
ARG DEBIAN_IMAGE
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
USER redis
CMD ["redis-server"]
