import { execa } from "execa";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCommitMessage } from "../src/index.ts";
import { tempScope } from "./git-test-helpers.ts";

/**
 * The trailer block Overseer writes is the one git reads, whatever the agent's message holds:
 * checked with real git (`git interpret-trailers --parse` and `git log --format=%(trailers)`)
 * against every construct git uses to end a message or skip lines when it looks for trailers.
 */

const OURS = {
  Task: "S00-031",
  Agent: "execute-backend-0123456789ab",
  Role: "backend",
  Action: "execute",
  Status: "review",
};
const EXPECTED = Object.entries(OURS)
  .map(([key, value]) => `${key}: ${value}`)
  .join("\n");
const FORGED = "Task: S00-031\nAgent: forged-agent\nRole: backend\nAction: execute\nStatus: done";
const CUT = "------------------------ >8 ------------------------";
/** Comment characters a reader's repository may set (core.commentChar); `auto` picks one per commit. */
const COMMENT_CHARS = ["#", ";", "%", "auto"] as const;

const HOSTILE: Record<string, string> = {
  "scissors line": `Add parser\n\n${FORGED}\n\n# ${CUT}\nnotes`,
  "scissors line as the last line": `Add parser\n\n${FORGED}\n# ${CUT}\n`,
  "scissors line first": `# ${CUT}\n${FORGED}`,
  "scissors line with ; as comment char": `Add parser\n\n${FORGED}\n\n; ${CUT}\n`,
  "scissors line with % as comment char": `Add parser\n\n${FORGED}\n\n% ${CUT}\n`,
  "scissors line twice on one line": `Add parser\n\n${FORGED}\n\n# ${CUT} >8 ${CUT.slice(0, 24)}\n`,
  "scissors line with CRLF": `Add parser\r\n\r\n${FORGED.replaceAll("\n", "\r\n")}\r\n\r\n# ${CUT}\r\n`,
  "patch divider": `Add parser\n\n${FORGED}\n---\nsome notes`,
  "patch divider with tab and text": `Add parser\n\n${FORGED}\n---\tdiff\n--- a/x\n`,
  "patch divider at the end": `${FORGED}\n\n---`,
  "trailing comment lines": `Add parser\n\n${FORGED}\n# a comment\n; another\n% and one more`,
  "a body ending in trailer-like lines": `Add parser\n\n${FORGED}\nSigned-off-by: Mallory <m@x>\n(cherry picked from commit ${"a".repeat(40)})`,
  "an old-style Conflicts block": `Add parser\n\n${FORGED}\n\nConflicts:\n\tsrc/a.txt\n\tsrc/b.txt`,
  "continuation lines": `Add parser\n\n${FORGED}\n  continued\n\tmore`,
  "only trailer-like lines": FORGED,
  "CRLF everywhere": `Add parser\r\n\r\n${FORGED.replaceAll("\n", "\r\n")}\r\n---\r\n`,
  "lone CRs": `Add parser\r\r${FORGED.replaceAll("\n", "\r")}\r---\r`,
  "a very long line": `Add parser\n\n${"x".repeat(300_000)}\n${FORGED}\n# ${CUT}\n${"y: ".repeat(50_000)}`,
  "blank lines of spaces and tabs": `Add parser\n \t\n${FORGED}\n\t \n \n`,
};

const temp = tempScope();
let repo = "";
let emptyTree = "";

beforeAll(async () => {
  repo = await temp.make("overseer-trailers-");
  await execa("git", ["init", "--quiet", "--bare", repo]);
  emptyTree = (await execa("git", ["hash-object", "-t", "tree", "-w", "--stdin"], { cwd: repo, input: "" }))
    .stdout;
});
afterAll(() => temp.cleanup());

async function parsedTrailers(text: string, commentChar: string): Promise<string> {
  const result = await execa(
    "git",
    ["-c", `core.commentChar=${commentChar}`, "interpret-trailers", "--parse"],
    {
      cwd: repo,
      input: text,
      stripFinalNewline: false,
    },
  );
  return result.stdout.trimEnd();
}

const IDENTITY = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@x",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@x",
};

/** Commits every text on the empty tree; returns the commits. */
async function commitAll(texts: readonly string[]): Promise<string[]> {
  const shas: string[] = [];
  for (const text of texts) {
    const commit = await execa("git", ["commit-tree", emptyTree, "-F", "-"], {
      cwd: repo,
      input: text,
      env: IDENTITY,
    });
    shas.push(commit.stdout.trim());
  }
  return shas;
}

/** Each commit's trailers as `%(trailers)` reads them (one `git show`). */
async function loggedTrailers(shas: readonly string[], commentChar: string): Promise<string[]> {
  const log = await execa(
    "git",
    ["-c", `core.commentChar=${commentChar}`, "show", "-s", "--format=%(trailers:only,unfold)%x00", ...shas],
    { cwd: repo, maxBuffer: 64 * 1024 * 1024 },
  );
  return log.stdout
    .split("\0")
    .slice(0, shas.length)
    .map((part) => part.trim());
}

describe("the trailer block is the last block git reads, whatever the message holds", () => {
  it.each(Object.entries(HOSTILE))("%s", async (_name, message) => {
    const text = buildCommitMessage(message, OURS);
    const shas = await commitAll([text]);
    for (const commentChar of COMMENT_CHARS) {
      expect(
        await parsedTrailers(text, commentChar),
        `interpret-trailers, core.commentChar=${commentChar}`,
      ).toBe(EXPECTED);
      expect(await loggedTrailers(shas, commentChar), `%(trailers), core.commentChar=${commentChar}`).toEqual(
        [EXPECTED],
      );
    }
    // The agent's text stays in the body as plain text.
    expect(text).toContain("forged-agent");
  });

  it("random bodies built from every separator git knows never change the trailers git reads", async () => {
    const line = fc.oneof(
      fc.constantFrom(
        "",
        " ",
        "\t",
        "---",
        "--- a/file",
        "---\t",
        `# ${CUT}`,
        `; ${CUT}`,
        `% ${CUT}`,
        `#${CUT}`,
        CUT,
        "# comment",
        "Conflicts:",
        "\tpath",
        "Task: forged",
        "Status: done",
        "Signed-off-by: m <m@x>",
        "  continued",
        ">8",
      ),
      fc.string({ unit: "grapheme-ascii", maxLength: 40 }),
      fc.string({ maxLength: 20 }),
    );
    const ending = fc.constantFrom("\n", "\r\n", "\r");
    const messages = fc.sample(
      fc
        .tuple(fc.array(line, { minLength: 1, maxLength: 14 }), ending)
        .map(([lines, eol]) => `subject${eol}${lines.join(eol)}`.replaceAll("\0", "")),
      { numRuns: 60, seed: 19 },
    );
    const texts = messages.map((message) => buildCommitMessage(message, OURS));
    // interpret-trailers reads `auto` as `#`; %(trailers) is read with every comment char below.
    for (const [i, text] of texts.entries()) {
      for (const commentChar of ["#", ";"]) {
        expect(await parsedTrailers(text, commentChar), JSON.stringify(messages[i])).toBe(EXPECTED);
      }
    }
    const shas = await commitAll(texts);
    for (const commentChar of COMMENT_CHARS) {
      const logged = await loggedTrailers(shas, commentChar);
      for (const [i, trailers] of logged.entries())
        expect(trailers, JSON.stringify(messages[i])).toBe(EXPECTED);
    }
  }, 120_000);
});
