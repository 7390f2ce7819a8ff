import { type BadCase, json, resolvePath } from "./bad-case.ts";

/** Well-formed requests for operations the state machine refuses. */
export const STATE_MACHINE_CASES: readonly BadCase[] = [
  {
    name: "release-external on a work task",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/S00-002/release-external",
    init: json({ reason: "x" }),
    status: 409,
  },
  {
    name: "resolve with an option not offered",
    method: "POST",
    path: resolvePath,
    init: json({ option_id: "use_mongo" }),
    status: 422,
  },
];
