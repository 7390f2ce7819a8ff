// The README's "Land through pull requests" subsections say, per forge, exactly the grants
// `doctor` prints (token-rights.ts), so what a newcomer grants is what doctor checks.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ForgeKind } from "../src/forge-adapter.ts";
import { FORGE_RIGHTS, RIGHT_GRANTS } from "../src/token-rights.ts";

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

const SECTIONS: Record<ForgeKind, { heading: string; tokenVariable: string; proof: string }> = {
  github: {
    heading: "#### GitHub (github.com and Enterprise Server)",
    tokenVariable: "GITHUB_TOKEN",
    proof: "X-Hub-Signature-256",
  },
  gitlab: {
    heading: "#### GitLab (gitlab.com and self-hosted)",
    tokenVariable: "GITLAB_TOKEN",
    proof: "X-Gitlab-Token",
  },
  gitea: { heading: "#### Gitea and Forgejo", tokenVariable: "GITEA_TOKEN", proof: "X-Gitea-Signature" },
};

/** The subsection's text, from its heading to the next heading or list of the section's end. */
function section(heading: string): string {
  const start = readme.indexOf(heading);
  expect(start, `README has "${heading}"`).toBeGreaterThan(0);
  const rest = readme.slice(start + heading.length);
  const end = rest.search(/\n#{2,4} |\n- `packages\/forge`/);
  return (end < 0 ? rest : rest.slice(0, end)).replace(/\s+/g, " ");
}

describe("README: Land through pull requests, per forge", () => {
  it.each(Object.entries(SECTIONS) as [ForgeKind, (typeof SECTIONS)[ForgeKind]][])(
    "%s: every right with doctor's grant, the init command, the webhook URL, secret and proof",
    (kind, { heading, tokenVariable, proof }) => {
      const text = section(heading);
      for (const right of FORGE_RIGHTS) expect(text).toContain(`${right}: ${RIGHT_GRANTS[kind][right]}`);
      expect(text).toContain(`${tokenVariable}=`);
      expect(text).toContain(`--forge ${kind} --forge-url`);
      expect(text).toContain(`/api/v1/forge/app/webhooks/${kind}`);
      expect(text).toContain("OVERSEER_FORGE_WEBHOOK_SECRET");
      expect(text).toContain(proof);
    },
  );
});
