import type { TaskCardInput } from "@overseer/domain";

/** A task card in stage S00 with `src/**` scope. */
export function taskCard(id: string, prerequisites: string[] = []): TaskCardInput {
  return {
    id,
    stage: "S00",
    title: `Task ${id}`,
    body: "",
    role: "general",
    scope: ["src/**"],
    prerequisites,
    acceptance: [],
    priority: 0,
  };
}
