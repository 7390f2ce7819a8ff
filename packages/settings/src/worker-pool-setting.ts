import { isPoolName, POOL_NAME_EXPECTED } from "@overseer/run-contract";
import { z } from "zod";
import { commaList } from "./setting-value-schemas.ts";
import { WORKER_DEFAULTS } from "./worker-defaults.ts";

/** `OVERSEER_WORKER_POOLS`: the worker pools a worker serves (docs/runner-config.md#worker-pools). */
export const WORKER_POOLS_SPEC = {
  name: "OVERSEER_WORKER_POOLS",
  fallback: WORKER_DEFAULTS.pools.join(","),
  description:
    "Comma-separated worker pools this worker serves (gpu,jdk); it takes the runs of projects whose runner config names one of them (pool), with one slot budget (OVERSEER_WORKER_CONCURRENCY) shared by all. List default too to also serve projects without a pool.",
  schema: commaList
    .pipe(
      z
        .array(z.string().refine(isPoolName, { error: POOL_NAME_EXPECTED }))
        .min(1, { error: "at least one pool name" }),
    )
    .transform((list): readonly string[] => Object.freeze([...new Set(list)])),
};
