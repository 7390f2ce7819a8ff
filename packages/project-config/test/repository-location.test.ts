import { describe, expect, it } from "vitest";
import { findRepositoryLocationProblem } from "../src/index.ts";

describe("repository locations", () => {
  it.each([
    "/srv/git/demo.git",
    "./relative/repo",
    "file:///tmp/repo.git",
    "https://github.com/acme/app.git",
    "ssh://git@example.com/acme/app.git",
    "git://example.com/app.git",
    "git@github.com:acme/app.git",
  ])("accepts %s", (location) => {
    expect(findRepositoryLocationProblem(location)).toBeUndefined();
  });

  it.each([
    ["ext::sh -c touch% /tmp/pwned", "ext::"],
    ["fd::3", "fd::"],
    ["ssh://-oProxyCommand=touch%20x/repo", "starting with -"],
    ["ssh://%2doProxyCommand=x/repo", "starting with -"],
    ["ssh://-oProxyCommand=touch /tmp/x/repo", "not a valid URL"],
    ["-oProxyCommand=x:repo", "starts with -"],
    ["-u/x", "starts with -"],
    ["javascript://x/y", "scheme"],
    ["https://", "not a valid URL"],
    ["/x\n/y", "control characters"],
  ])("refuses %s", (location, phrase) => {
    expect(findRepositoryLocationProblem(location)).toContain(phrase);
  });
});
