# Test-only Node base image for `npm run test:deploy` (no image registry is reachable there).
# FROM the locally imported Debian bookworm root filesystem; the context (prepared by
# scripts/test-deploy.sh, never committed) holds the host's own node binary, its npm and the
# machine's extra CA certificates, so npm and apt inside image builds trust the same roots as
# the host. Laid out like the official node images (/usr/local/bin/node, npm, npx).
ARG DEBIAN_IMAGE
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY ca-certificates/ /usr/local/share/ca-certificates/
RUN update-ca-certificates
COPY node /usr/local/bin/node
COPY npm/ /usr/local/lib/node_modules/npm/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    NPM_CONFIG_CAFILE=/etc/ssl/certs/ca-certificates.crt \
    NPM_CONFIG_UPDATE_NOTIFIER=false
CMD ["node"]
