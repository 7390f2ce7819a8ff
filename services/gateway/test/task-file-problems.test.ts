import { describe, expect, it } from "vitest";
import { existingIdProblems, idsInFile, rejectedFile } from "../src/operations/task-file-problems.ts";

describe("idsInFile", () => {
  it("reads the ids of an array or of { tasks }, in JSON or YAML, keeping positions of entries without one", () => {
    expect(
      idsInFile(JSON.stringify([{ id: "a" }, { title: "no id" }, { id: 7 }, { id: "b" }]), "json"),
    ).toEqual(["a", "", "", "b"]);
    expect(idsInFile("tasks:\n  - id: x\n  - id: y\n", "yaml")).toEqual(["x", "y"]);
  });

  it("finds none in text that does not parse or holds no task list", () => {
    expect(idsInFile("[{", "json")).toEqual([]);
    expect(idsInFile('{"other": []}', "json")).toEqual([]);
  });
});

describe("existingIdProblems", () => {
  it("names each task whose id the project already has, by its position in the file", () => {
    const problems = existingIdProblems(["a", "b", "c"], new Set(["b"]), "p1", "request body");
    expect(problems).toEqual([
      {
        kind: "duplicate-id",
        source: "request body",
        index: 1,
        taskId: "b",
        message: "task #2 (b): a task with this id already exists in project p1; choose another id",
      },
    ]);
  });
});

describe("rejectedFile", () => {
  it("is a 422 listing every problem, and says nothing was imported", () => {
    const error = rejectedFile(existingIdProblems(["a", "b"], new Set(["a", "b"]), "p1", "request body"));
    expect(error.status).toBe(422);
    expect(error.code).toBe("invalid_task_file");
    expect(error.message).toMatch(/^Task file rejected, nothing was imported \(2 problems\): task #1/);
    expect(error.details).toMatchObject({ problems: [{ taskId: "a" }, { taskId: "b" }] });
  });
});
