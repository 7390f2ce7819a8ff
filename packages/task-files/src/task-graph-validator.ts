import { describeTask, type TaskFileProblem } from "./task-file-problem.ts";

/** A task as the graph sees it: its id, position in the file and prerequisite ids. */
export interface TaskGraphNode {
  readonly id: string;
  /** 0-based position in the file. */
  readonly index: number;
  readonly prerequisites: readonly string[];
}

export interface TaskGraphOptions {
  /** Ids of tasks already in the project: valid prerequisite targets. */
  readonly existingIds?: Iterable<string>;
}

/**
 * Checks the dependency graph of a task file and returns every problem: duplicate ids,
 * prerequisites naming no known task, tasks depending on themselves, and dependency cycles.
 *
 * Edges go from a task to its prerequisites. Existing project tasks cannot close a cycle (they
 * cannot depend on tasks that do not exist yet), so cycles are searched among the file's tasks
 * only. Self-dependencies are reported as such and left out of the cycle search, so one mistake
 * gives one problem.
 */
export function validateTaskGraph(
  nodes: readonly TaskGraphNode[],
  source: string,
  options: TaskGraphOptions = {},
): TaskFileProblem[] {
  const problems: TaskFileProblem[] = [];
  const existing = new Set(options.existingIds ?? []);

  const byId = new Map<string, TaskGraphNode[]>();
  for (const node of nodes) {
    const list = byId.get(node.id);
    if (list) list.push(node);
    else byId.set(node.id, [node]);
  }
  for (const [id, list] of byId) {
    if (list.length < 2) continue;
    const positions = list.map((n) => `#${n.index + 1}`).join(", ");
    problems.push({
      kind: "duplicate-id",
      source,
      taskId: id,
      index: list[1]?.index,
      message: `duplicate task id ${id} (tasks ${positions}); every id must be unique`,
    });
  }

  for (const node of nodes) {
    node.prerequisites.forEach((prerequisite, i) => {
      const field = `prerequisites[${i}]`;
      if (prerequisite === node.id) {
        problems.push({
          kind: "self-dependency",
          source,
          index: node.index,
          taskId: node.id,
          field,
          message: `${describeTask(node.index, node.id)}: ${field}: a task cannot depend on itself`,
        });
      } else if (!byId.has(prerequisite) && !existing.has(prerequisite)) {
        problems.push({
          kind: "unknown-prerequisite",
          source,
          index: node.index,
          taskId: node.id,
          field,
          message: `${describeTask(node.index, node.id)}: ${field}: unknown prerequisite ${prerequisite} (not in this file nor in the project)`,
        });
      }
    });
  }

  const edges = new Map<string, string[]>();
  for (const [id, list] of byId) {
    const targets = new Set<string>();
    for (const node of list) for (const p of node.prerequisites) if (p !== id && byId.has(p)) targets.add(p);
    edges.set(id, [...targets].sort());
  }
  for (const cycle of findDependencyCycles(edges)) {
    problems.push({
      kind: "cycle",
      source,
      cycle,
      taskId: cycle[0],
      message: `dependency cycle: ${cycle.join(" -> ")} (each task lists the next one as a prerequisite)`,
    });
  }
  return problems;
}

/**
 * One cycle per strongly connected component of more than one task, as a path whose first id
 * is repeated last (`["A", "B", "C", "A"]`). The path starts at the component's smallest id and
 * is the shortest way back to it, so output is deterministic and short even in a dense tangle.
 * Self-loops are ignored (callers report them separately).
 *
 * Components come from Tarjan's algorithm, written iteratively so a long dependency chain
 * cannot overflow the stack.
 */
export function findDependencyCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  for (const component of stronglyConnectedComponents(edges)) {
    if (component.length < 2) continue;
    const members = new Set(component);
    const start = [...component].sort()[0] as string;
    const path = shortestCycleThrough(start, members, edges);
    if (path) cycles.push(path);
  }
  return cycles.sort((a, b) => (a[0] ?? "").localeCompare(b[0] ?? ""));
}

function shortestCycleThrough(
  start: string,
  members: ReadonlySet<string>,
  edges: ReadonlyMap<string, readonly string[]>,
): string[] | undefined {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const current = queue[head] as string;
    for (const next of edges.get(current) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [current];
        for (let at = current; at !== start; ) {
          at = previous.get(at) as string;
          path.push(at);
        }
        return [...path.reverse(), start];
      }
      if (!previous.has(next) && next !== start) {
        previous.set(next, current);
        queue.push(next);
      }
    }
  }
  return undefined;
}

function stronglyConnectedComponents(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const lowlink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;

  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    // Each frame is a node and the position of the next successor to visit.
    const frames: { node: string; next: number }[] = [{ node: root, next: 0 }];
    index.set(root, counter);
    lowlink.set(root, counter);
    counter++;
    stack.push(root);
    onStack.add(root);

    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { node: string; next: number };
      const successors = edges.get(frame.node) ?? [];
      if (frame.next < successors.length) {
        const successor = successors[frame.next++] as string;
        if (!edges.has(successor)) continue;
        if (!index.has(successor)) {
          index.set(successor, counter);
          lowlink.set(successor, counter);
          counter++;
          stack.push(successor);
          onStack.add(successor);
          frames.push({ node: successor, next: 0 });
        } else if (onStack.has(successor)) {
          lowlink.set(
            frame.node,
            Math.min(lowlink.get(frame.node) as number, index.get(successor) as number),
          );
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) {
        lowlink.set(
          parent.node,
          Math.min(lowlink.get(parent.node) as number, lowlink.get(frame.node) as number),
        );
      }
      if (lowlink.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}
