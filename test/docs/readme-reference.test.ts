import { readFileSync } from "node:fs";
import path from "node:path";
import { renderSettingsMarkdown } from "@overseer/settings";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { REPO_ROOT } from "../support/service-process.ts";

const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");

describe("README", () => {
  it("documents every service setting exactly as the code defines it", () => {
    const section = /<!-- settings:begin -->\n([\s\S]*?)\n<!-- settings:end -->/.exec(readme)?.[1];
    expect(section?.trim()).toBe(renderSettingsMarkdown().trim());
  });

  it("quick start has the demo and the test command that .ci/run calls", () => {
    expect(readme).toContain("npm run demo -- --once");
    expect(readme).toContain("npm test");
    expect(readFileSync(path.join(REPO_ROOT, ".ci/run"), "utf8")).toMatch(/^npm test$/m);
  });
});

describe("docker-compose.yml", () => {
  it("defines postgres and redis with health checks and the cluster services", () => {
    const compose = YAML.parse(readFileSync(path.join(REPO_ROOT, "docker-compose.yml"), "utf8"));
    for (const name of ["postgres", "redis", "coordinator", "gateway", "worker"])
      expect(compose.services[name]).toBeDefined();
    expect(compose.services.postgres.healthcheck.test).toBeDefined();
    expect(compose.services.redis.healthcheck.test).toBeDefined();
    const worker = compose.services.worker;
    expect(worker.environment.OVERSEER_SANDBOX).toBe("bwrap");
    // Runs are sandboxed by bwrap inside the worker container: no Docker socket, not privileged,
    // a seccomp profile of its own and never an unconfined one (infra/README.md).
    expect(JSON.stringify(worker.volumes ?? [])).not.toContain("docker.sock");
    expect(worker.privileged ?? false).toBe(false);
    expect(worker.security_opt).toContain("seccomp=infra/seccomp-bwrap.json");
    expect(JSON.stringify(worker.security_opt)).not.toContain("unconfined");
    expect(worker.cap_drop).toEqual(["ALL"]);
  });
});
