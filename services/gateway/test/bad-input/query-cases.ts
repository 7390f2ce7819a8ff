import type { BadCase } from "./bad-case.ts";

/** Query parameters and headers out of range or of the wrong form: limits, filters, cursors, Last-Event-ID. */
export const QUERY_CASES: readonly BadCase[] = [
  {
    name: "limit zero",
    method: "GET",
    path: "/api/v1/projects/bad/tasks?limit=0",
    status: 400,
    mentions: "limit",
  },
  {
    name: "limit not a number",
    method: "GET",
    path: "/api/v1/projects/bad/events?limit=lots",
    status: 400,
    mentions: "limit",
  },
  {
    name: "limit too large",
    method: "GET",
    path: "/api/v1/projects/bad/runs?limit=100000",
    status: 400,
    mentions: "limit",
  },
  {
    name: "unknown status filter",
    method: "GET",
    path: "/api/v1/projects/bad/tasks?status=todo,sleeping",
    status: 400,
    mentions: "status",
  },
  {
    name: "repeated status filter",
    method: "GET",
    path: "/api/v1/projects/bad/tasks?status=todo&status=done",
    status: 400,
    mentions: "status",
  },
  { name: "bad kind filter", method: "GET", path: "/api/v1/projects/bad/tasks?kind=epic", status: 400 },
  {
    name: "bad cursor",
    method: "GET",
    path: "/api/v1/projects/bad/tasks?cursor=abc",
    status: 400,
    mentions: "cursor",
  },
  {
    name: "negative event cursor",
    method: "GET",
    path: "/api/v1/projects/bad/events?after=-1",
    status: 400,
    mentions: "after",
  },
  {
    name: "bad event type",
    method: "GET",
    path: "/api/v1/projects/bad/events?type=DROP%20TABLE",
    status: 400,
  },
  {
    name: "bad run cursor",
    method: "GET",
    path: "/api/v1/projects/bad/runs?before=yesterday",
    status: 400,
    mentions: "before",
  },
  {
    name: "bad compact flag",
    method: "GET",
    path: "/api/projects/bad/snapshot?compact=maybe",
    status: 400,
    mentions: "compact",
  },
  {
    name: "bad Last-Event-ID",
    method: "GET",
    path: "/api/projects/bad/events/stream",
    init: { headers: { "Last-Event-ID": "1; DROP" } },
    status: 400,
  },
  { name: "bad log cursor", method: "GET", path: "/api/runs/whatever/log/stream?after=../../x", status: 400 },
];
