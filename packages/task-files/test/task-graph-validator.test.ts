import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findDependencyCycles, type TaskGraphNode, validateTaskGraph } from "../src/index.ts";

function graph(edges: Record<string, string[]>): Map<string, string[]> {
  return new Map(Object.entries(edges));
}

function nodes(edges: Record<string, string[]>): TaskGraphNode[] {
  return Object.entries(edges).map(([id, prerequisites], index) => ({ id, index, prerequisites }));
}

/** Reference answer: a graph has a cycle iff Kahn's topological sort cannot consume it. */
function hasCycle(edges: Map<string, string[]>): boolean {
  const indegree = new Map([...edges.keys()].map((k) => [k, 0]));
  for (const targets of edges.values()) for (const t of targets) indegree.set(t, (indegree.get(t) ?? 0) + 1);
  const queue = [...indegree].filter(([, d]) => d === 0).map(([k]) => k);
  let seen = 0;
  while (queue.length > 0) {
    const node = queue.pop() as string;
    seen++;
    for (const t of edges.get(node) ?? []) {
      const d = (indegree.get(t) ?? 0) - 1;
      indegree.set(t, d);
      if (d === 0) queue.push(t);
    }
  }
  return seen < indegree.size;
}

describe("findDependencyCycles", () => {
  it("prints each cycle as a closed path from its smallest id", () => {
    expect(findDependencyCycles(graph({ C: ["A"], A: ["B"], B: ["C"] }))).toEqual([["A", "B", "C", "A"]]);
  });

  it("finds one cycle per tangle, in a stable order", () => {
    const cycles = findDependencyCycles(
      graph({ X: ["Y"], Y: ["X"], A: ["B"], B: ["A", "C"], C: ["D"], D: [], E: ["A"] }),
    );
    expect(cycles).toEqual([
      ["A", "B", "A"],
      ["X", "Y", "X"],
    ]);
  });

  it("chooses the shortest way back in a dense component", () => {
    const cycles = findDependencyCycles(graph({ A: ["B", "D"], B: ["C"], C: ["A"], D: ["A"] }));
    expect(cycles).toEqual([["A", "D", "A"]]);
  });

  it("ignores self-loops and acyclic graphs", () => {
    expect(findDependencyCycles(graph({ A: ["A"], B: ["A"] }))).toEqual([]);
    expect(findDependencyCycles(graph({ A: ["B", "C"], B: ["C"], C: [] }))).toEqual([]);
  });

  it("handles a very long chain without recursion limits", () => {
    const size = 50_000;
    const edges = new Map<string, string[]>();
    for (let i = 0; i < size; i++) edges.set(`T-${i}`, i + 1 < size ? [`T-${i + 1}`] : ["T-0"]);
    const cycles = findDependencyCycles(edges);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toHaveLength(size + 1);
  });

  it("agrees with a topological sort on random graphs, and every printed path is a real cycle", () => {
    const ids = ["A", "B", "C", "D", "E", "F", "G"];
    const arbitraryGraph = fc
      .array(fc.tuple(fc.constantFrom(...ids), fc.constantFrom(...ids)), { maxLength: 14 })
      .map((pairs) => {
        const edges = new Map(ids.map((id) => [id, [] as string[]]));
        for (const [from, to] of pairs)
          if (from !== to && !edges.get(from)?.includes(to)) edges.get(from)?.push(to);
        return edges;
      });
    fc.assert(
      fc.property(arbitraryGraph, (edges) => {
        const cycles = findDependencyCycles(edges);
        expect(cycles.length > 0).toBe(hasCycle(edges));
        for (const cycle of cycles) {
          expect(cycle[0]).toBe(cycle[cycle.length - 1]);
          expect(new Set(cycle.slice(0, -1)).size).toBe(cycle.length - 1);
          for (let i = 0; i + 1 < cycle.length; i++) {
            expect(edges.get(cycle[i] as string)).toContain(cycle[i + 1]);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("validateTaskGraph", () => {
  it("reports duplicates, unknown prerequisites, self-dependencies and cycles", () => {
    const problems = validateTaskGraph(
      [
        { id: "A", index: 0, prerequisites: ["B"] },
        { id: "B", index: 1, prerequisites: ["A", "B", "Z"] },
        { id: "A", index: 2, prerequisites: [] },
      ],
      "f.yaml",
    );
    expect(problems.map((p) => p.kind)).toEqual([
      "duplicate-id",
      "self-dependency",
      "unknown-prerequisite",
      "cycle",
    ]);
    expect(problems.find((p) => p.kind === "cycle")?.message).toBe(
      "dependency cycle: A -> B -> A (each task lists the next one as a prerequisite)",
    );
  });

  it("accepts prerequisites among existing ids", () => {
    expect(validateTaskGraph(nodes({ A: ["OLD-1"] }), "f", { existingIds: ["OLD-1"] })).toEqual([]);
  });

  it("returns nothing for a valid graph", () => {
    expect(validateTaskGraph(nodes({ A: [], B: ["A"], C: ["A", "B"] }), "f")).toEqual([]);
  });
});
