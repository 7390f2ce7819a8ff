import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  formatProblems,
  loadTaskFile,
  parseTaskFile,
  stageFromId,
  type TaskFileProblem,
  type TaskFileResult,
} from "../src/index.ts";

function problemsOf(result: TaskFileResult): readonly TaskFileProblem[] {
  if (result.ok) throw new Error(`expected problems, got ${result.tasks.length} tasks`);
  expect(result).not.toHaveProperty("tasks");
  return result.problems;
}

function tasksOf(result: TaskFileResult) {
  if (!result.ok) throw new Error(formatProblems(result.problems));
  return result.tasks;
}

const YAML_FILE = `
# Stage 0 backlog
- id: S00-001
  title: Set up CI
  role: ci-cd
  scope: [".github/**", "ci/"]
  acceptance: CI runs on every push
  priority: 5
- id: S01-002
  title: "Repair conflicting Codex harness sandbox arguments"
  body: |
    Fix the argv.
    Keep the local config.
  prereqs: [S00-001]
  acceptance:
    - make check passes
    - evidence recorded
- id: misc-task
  title: Tidy docs
  stage: S02
  body:
`;

describe("parseTaskFile", () => {
  it("reads a YAML list of tasks and applies defaults", () => {
    const tasks = tasksOf(parseTaskFile(YAML_FILE, "yaml", "tasks.yaml"));
    expect(tasks).toEqual([
      {
        id: "S00-001",
        stage: "S00",
        title: "Set up CI",
        body: "",
        role: "ci-cd",
        scope: [".github/**", "ci/"],
        prerequisites: [],
        acceptance: ["CI runs on every push"],
        priority: 5,
      },
      {
        id: "S01-002",
        stage: "S01",
        title: "Repair conflicting Codex harness sandbox arguments",
        body: "Fix the argv.\nKeep the local config.\n",
        role: "general",
        scope: ["**"],
        prerequisites: ["S00-001"],
        acceptance: ["make check passes", "evidence recorded"],
        priority: 0,
      },
      {
        id: "misc-task",
        stage: "S02",
        title: "Tidy docs",
        body: "",
        role: "general",
        scope: ["**"],
        prerequisites: [],
        acceptance: [],
        priority: 0,
      },
    ]);
  });

  it("reads JSON in the { tasks: [...] } form", () => {
    const json = JSON.stringify({
      tasks: [
        { id: "S03-010", title: "A", prerequisites: ["S03-011", "S03-011"], priority: -2 },
        { id: "S03-011", title: "B", scope: ["src/**/*.ts"] },
      ],
    });
    const tasks = tasksOf(parseTaskFile(json, "json", "tasks.json"));
    expect(tasks.map((t) => [t.id, t.stage, t.prerequisites, t.priority])).toEqual([
      ["S03-010", "S03", ["S03-011"], -2],
      ["S03-011", "S03", [], 0],
    ]);
  });

  it("accepts the { tasks } form in YAML and the array form in JSON", () => {
    expect(tasksOf(parseTaskFile("tasks:\n  - id: A-1\n    title: x\n", "yaml", "t")).length).toBe(1);
    expect(tasksOf(parseTaskFile('[{"id": "A-1", "title": "x"}]', "json", "t")).length).toBe(1);
    expect(tasksOf(parseTaskFile("[]", "json", "t"))).toEqual([]);
  });

  it("lets prerequisites point at tasks already in the project", () => {
    const text = "- id: S01-005\n  title: next\n  prerequisites: [S00-028]\n";
    expect(problemsOf(parseTaskFile(text, "yaml", "t")).map((p) => p.kind)).toEqual(["unknown-prerequisite"]);
    expect(tasksOf(parseTaskFile(text, "yaml", "t", { existingIds: ["S00-028"] }))[0]?.prerequisites).toEqual(
      ["S00-028"],
    );
    expect(tasksOf(parseTaskFile(text, "yaml", "t", { existingIds: new Set(["S00-028"]) })).length).toBe(1);
  });

  it("reports every kind of problem together and returns no task", () => {
    const text = `
- id: S01-001
  title: First
  prerequisites: [S01-002]
- id: S01-002
  title: Second
  prerequisites: [S01-003, NOPE-9]
- id: S01-003
  title: Third
  prerequisites: [S01-001, S01-003]
  scope: ["/etc/**", "src/../secrets/**", "ok/**", "bad\\u0007glob", "", "a{"]
- id: S01-001
  title: Duplicate of the first
- id: S01-004
  title: 7
  priority: high
  prerequisite: [S01-001]
- title: no id
- just a string
`;
    const problems = problemsOf(parseTaskFile(text, "yaml", "backlog.yaml"));
    const kinds = new Set(problems.map((p) => p.kind));
    expect([...kinds].sort()).toEqual(
      ["bad-glob", "cycle", "duplicate-id", "schema", "self-dependency", "unknown-prerequisite"].sort(),
    );
    const at = (kind: string) => problems.filter((p) => p.kind === kind);

    expect(at("bad-glob").map((p) => p.field)).toEqual([
      "scope[0]",
      "scope[1]",
      "scope[3]",
      "scope[4]",
      "scope[5]",
    ]);
    expect(at("bad-glob").map((p) => p.message.split(", which ")[1])).toEqual([
      "is absolute",
      "has a .. segment",
      "contains control characters",
      "is empty",
      expect.stringContaining("cannot be compiled"),
    ]);
    expect(at("duplicate-id")).toEqual([
      expect.objectContaining({ taskId: "S01-001", message: expect.stringContaining("tasks #1, #4") }),
    ]);
    expect(at("unknown-prerequisite")).toEqual([
      expect.objectContaining({
        taskId: "S01-002",
        field: "prerequisites[1]",
        message: expect.stringContaining("NOPE-9"),
      }),
    ]);
    expect(at("self-dependency")).toEqual([
      expect.objectContaining({ taskId: "S01-003", field: "prerequisites[1]" }),
    ]);
    expect(at("cycle")).toEqual([
      expect.objectContaining({ cycle: ["S01-001", "S01-002", "S01-003", "S01-001"] }),
    ]);
    expect(at("cycle")[0]?.message).toContain("S01-001 -> S01-002 -> S01-003 -> S01-001");

    const schema = at("schema").map((p) => [p.index, p.taskId, p.field]);
    expect(schema).toEqual(
      expect.arrayContaining([
        [4, "S01-004", "title"],
        [4, "S01-004", "priority"],
        [4, "S01-004", "prerequisite"],
        [5, undefined, "id"],
        [6, undefined, undefined],
      ]),
    );
    expect(at("schema").find((p) => p.field === "prerequisite")?.message).toContain(
      'did you mean "prerequisites"?',
    );
    expect(at("schema").find((p) => p.field === "priority")?.message).toContain('received "high"');
    for (const p of problems) expect(p.source).toBe("backlog.yaml");
  });

  it("does not cascade one bad task into unknown-prerequisite reports", () => {
    const text = JSON.stringify([
      { id: "A-1", title: "" },
      { id: "A-2", title: "uses A-1", prerequisites: ["A-1"] },
    ]);
    const problems = problemsOf(parseTaskFile(text, "json", "t.json"));
    expect(problems.map((p) => [p.kind, p.field])).toEqual([["schema", "title"]]);
  });

  it("bounds titles (default 500 characters, or maxTitleChars) and returns no task for a longer one", () => {
    const file = (title: string) => JSON.stringify([{ id: "S00-001", title }]);
    expect(parseTaskFile(file("t".repeat(500)), "json", "f.json").ok).toBe(true);
    const long = parseTaskFile(file("t".repeat(250_000)), "json", "f.json");
    expect(long.ok).toBe(false);
    if (!long.ok)
      expect(long.problems).toEqual([
        expect.objectContaining({
          kind: "schema",
          field: "title",
          message: expect.stringContaining(
            "title: expected at most 500 characters (put the details in body), received 250000",
          ),
        }),
      ]);
    expect(parseTaskFile(file("t".repeat(21)), "json", "f.json", { maxTitleChars: 20 }).ok).toBe(false);
  });

  it("validates each field", () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ id: "bad id" }, "id", "a task id"],
      [{ id: "-leading" }, "id", "a task id"],
      [{ id: 28 }, "id", "a task id"],
      [{ title: "" }, "title", "a non-empty single-line string"],
      [{ title: "two\nlines" }, "title", "single-line"],
      [{ body: 3 }, "body", "a string"],
      [{ role: "QA team" }, "role", "a role name"],
      [{ stage: "stage one" }, "stage", "a stage name"],
      [{ scope: "src/**" }, "scope", "an array of globs"],
      [{ scope: [] }, "scope", "at least one glob"],
      [{ scope: [3] }, "scope[0]", "glob"],
      [{ prerequisites: "A-2" }, "prerequisites", "an array of task ids"],
      [{ prereqs: ["bad id"] }, "prereqs[0]", "a task id"],
      [{ acceptance: 5 }, "acceptance", "a string or an array of strings"],
      [{ priority: 1.5 }, "priority", "an integer"],
      [{ priority: 2 ** 31 }, "priority", "an integer from -2147483648 to 2147483647"],
      [{ priority: "3" }, "priority", "an integer"],
      [{ prerequisites: ["A-2"], prereqs: ["A-2"] }, "prereqs", "only one of prerequisites or prereqs"],
    ];
    for (const [patch, field, words] of cases) {
      const text = JSON.stringify([
        { id: "A-1", title: "t", ...patch },
        { id: "A-2", title: "u" },
      ]);
      const problems = problemsOf(parseTaskFile(text, "json", "t.json"));
      const match = problems.find((p) => p.field === field);
      expect(match, `${JSON.stringify(patch)}: ${formatProblems(problems)}`).toBeDefined();
      expect(match?.kind).toBe("schema");
      expect(match?.message).toContain(`: ${field}: expected `);
      expect(match?.message).toContain(words);
    }
  });

  it("rejects top-level shapes that are not task lists", () => {
    for (const [text, format] of [
      ["null", "json"],
      ['"tasks"', "json"],
      ['{"tasks": {"id": "A-1"}}', "json"],
      ['{"tasks": [], "version": 2}', "json"],
      ["", "yaml"],
    ] as const) {
      const problems = problemsOf(parseTaskFile(text, format, "t"));
      expect(
        problems.map((p) => p.kind),
        text,
      ).toEqual(["shape"]);
    }
  });

  it("reports syntax errors with their position", () => {
    const yaml = problemsOf(parseTaskFile("- id: A-1\n  title: [unclosed\n", "yaml", "t.yaml"));
    expect(yaml[0]?.kind).toBe("syntax");
    expect(yaml[0]?.message).toMatch(/^invalid YAML: line \d+, column \d+: /);
    const duplicateKey = problemsOf(parseTaskFile("- id: A-1\n  id: A-2\n  title: x\n", "yaml", "t.yaml"));
    expect(duplicateKey[0]?.message).toContain("unique");
    const json = problemsOf(parseTaskFile('[{"id": "A-1",}]', "json", "t.json"));
    expect(json[0]?.message).toMatch(/^invalid JSON: line 1, column \d+: /);
  });

  it("keeps YAML 1.2 scalars as written (yes stays a string, ids stay strings)", () => {
    const tasks = tasksOf(parseTaskFile("- id: S00-028\n  title: yes\n  acceptance: no\n", "yaml", "t"));
    expect(tasks[0]).toMatchObject({ id: "S00-028", title: "yes", acceptance: ["no"] });
  });
});

describe("stageFromId", () => {
  it("takes an S<digits> prefix, else S00", () => {
    expect(stageFromId("S00-028")).toBe("S00");
    expect(stageFromId("S12-1")).toBe("S12");
    expect(stageFromId("S1-x-y")).toBe("S1");
    expect(stageFromId("docs-1")).toBe("S00");
    expect(stageFromId("S01")).toBe("S00");
    expect(stageFromId("s01-002")).toBe("S00");
  });
});

describe("formatProblems", () => {
  it("prints a count and one source-prefixed line per problem", () => {
    const result = parseTaskFile(
      "- id: A-1\n  title: x\n  prerequisites: [A-1, B-2]\n",
      "yaml",
      "tasks.yaml",
    );
    const text = formatProblems(problemsOf(result));
    expect(text).toBe(
      [
        "Task file rejected, nothing was imported (2 problems):",
        "  tasks.yaml: task #1 (A-1): prerequisites[0]: a task cannot depend on itself",
        "  tasks.yaml: task #1 (A-1): prerequisites[1]: unknown prerequisite B-2 (not in this file nor in the project)",
        "",
      ].join("\n"),
    );
  });
});

describe("loadTaskFile", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "overseer-task-file-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("picks the format from the extension", async () => {
    await writeFile(path.join(dir, "t.yaml"), YAML_FILE);
    await writeFile(path.join(dir, "t.yml"), YAML_FILE);
    await writeFile(path.join(dir, "t.json"), JSON.stringify({ tasks: [{ id: "A-1", title: "x" }] }));
    expect(tasksOf(await loadTaskFile(path.join(dir, "t.yaml"))).length).toBe(3);
    expect(tasksOf(await loadTaskFile(path.join(dir, "t.yml"))).length).toBe(3);
    expect(tasksOf(await loadTaskFile(path.join(dir, "t.json")))[0]?.id).toBe("A-1");
  });

  it("passes existingIds through", async () => {
    const file = path.join(dir, "t.json");
    await writeFile(file, JSON.stringify([{ id: "A-2", title: "x", prerequisites: ["A-1"] }]));
    expect((await loadTaskFile(file)).ok).toBe(false);
    expect((await loadTaskFile(file, { existingIds: ["A-1"] })).ok).toBe(true);
  });

  it("reports unknown extensions and unreadable files as read problems", async () => {
    await writeFile(path.join(dir, "t.txt"), "[]");
    const ext = problemsOf(await loadTaskFile(path.join(dir, "t.txt")));
    expect(ext).toEqual([
      expect.objectContaining({ kind: "read", message: "expected a .json, .yaml or .yml file" }),
    ]);
    const missing = problemsOf(await loadTaskFile(path.join(dir, "missing.yaml")));
    expect(missing).toEqual([
      expect.objectContaining({ kind: "read", message: expect.stringContaining("ENOENT") }),
    ]);
  });

  it("names the file in every problem", async () => {
    const file = path.join(dir, "bad.yaml");
    await writeFile(file, "- id: A-1\n");
    const problems = problemsOf(await loadTaskFile(file));
    expect(formatProblems(problems)).toContain(
      `${file}: task #1 (A-1): title: expected a non-empty single-line string`,
    );
  });
});
