# Image the docker sandbox driver runs agents in (OVERSEER_SANDBOX=docker):
# a plain toolchain, no Overseer code, no credentials. Add the agent CLIs you use.
#   docker build -f infra/sandbox.Dockerfile -t overseer-agent-sandbox:latest .
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates python3 \
 && rm -rf /var/lib/apt/lists/*
USER 65534:65534
