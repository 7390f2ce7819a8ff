import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitEnv, HARDENING_ENV, INHERITED_GIT_VARS } from "../src/git-env.ts";

/** What git got before the cache: a full walk of process.env on every call. */
function walkedEnv(options: { hostConfig?: boolean; env?: Record<string, string> } = {}) {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (key.startsWith("GIT_") && !INHERITED_GIT_VARS.has(key)) continue;
    env[key] = value;
  }
  Object.assign(env, HARDENING_ENV);
  if (options.hostConfig) {
    delete env.GIT_CONFIG_NOSYSTEM;
    delete env.GIT_CONFIG_GLOBAL;
  }
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (!key.startsWith("GIT_CONFIG_")) env[key] = value;
  }
  return env;
}

describe("gitEnv", () => {
  let saved: NodeJS.ProcessEnv;
  beforeEach(() => {
    saved = process.env;
    // A copy of our own, with inherited git variables both kept and dropped.
    process.env = { ...saved, GIT_DIR: "/elsewhere", GIT_SSH_COMMAND: "ssh -i key", OVERSEER_X: "1" };
  });
  afterEach(() => {
    process.env = saved;
  });

  const cases: { hostConfig?: boolean; env?: Record<string, string> }[] = [
    {},
    { hostConfig: true },
    { env: { GIT_AUTHOR_NAME: "A", GIT_CONFIG_GLOBAL: "/home/x/.gitconfig", GIT_CONFIG_COUNT: "1" } },
    { hostConfig: true, env: { GIT_INDEX_FILE: "/tmp/index", LC_ALL: "en_US.UTF-8" } },
  ];

  it("gives git exactly what a walk of process.env gives, whatever the options", () => {
    for (const options of cases) {
      expect(gitEnv(options)).toEqual(walkedEnv(options));
      expect(gitEnv(options)).toEqual(walkedEnv(options));
    }
    expect(gitEnv()).toMatchObject({ GIT_SSH_COMMAND: "ssh -i key", OVERSEER_X: "1", GIT_PAGER: "cat" });
    expect(gitEnv()).not.toHaveProperty("GIT_DIR");
  });

  it("sees trace switches, HOME and PATH changed at run time, and a replaced process.env", () => {
    gitEnv();
    process.env.GIT_TRACE2_EVENT = "/tmp/trace-a.json";
    process.env.HOME = "/tmp/other-home";
    process.env.XDG_CONFIG_HOME = "/tmp/xdg";
    process.env.PATH = `/opt/bin:${saved.PATH ?? ""}`;
    for (const options of cases) expect(gitEnv(options)).toEqual(walkedEnv(options));
    process.env.GIT_TRACE2_EVENT = "/tmp/trace-b.json";
    expect(gitEnv().GIT_TRACE2_EVENT).toBe("/tmp/trace-b.json");
    delete process.env.GIT_TRACE2_EVENT;
    delete process.env.HOME;
    for (const options of cases) expect(gitEnv(options)).toEqual(walkedEnv(options));
    process.env = { ...process.env, OVERSEER_Y: "2", GIT_WORK_TREE: "/w" };
    for (const options of cases) expect(gitEnv(options)).toEqual(walkedEnv(options));
    expect(gitEnv().OVERSEER_Y).toBe("2");
  });

  it("walks process.env once, not on every call, and each call gets its own object", () => {
    let walks = 0;
    process.env = new Proxy(
      { ...process.env },
      {
        ownKeys(target) {
          walks++;
          return Reflect.ownKeys(target);
        },
      },
    );
    const first = gitEnv();
    first.MUTATED = "yes";
    for (let i = 0; i < 5; i++) gitEnv({ hostConfig: i % 2 === 0 });
    expect(walks).toBe(1);
    expect(gitEnv()).not.toHaveProperty("MUTATED");
    expect(gitEnv()).toEqual(walkedEnv());
  });
});
