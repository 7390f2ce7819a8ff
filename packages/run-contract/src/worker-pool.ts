import { z } from "zod";

/**
 * Worker pools: a worker serves the pools it declares (`OVERSEER_WORKER_POOLS`, default the
 * `default` pool) and a project names the one pool its runs need (runner config `pool`, default
 * `default`). One grammar for both sides and for the run job that carries it.
 */
export const DEFAULT_POOL = "default";

export const POOL_NAME_EXPECTED =
  'a pool name: lower-case letters, digits, _ or - (at most 63, starting with a letter or digit), such as "jdk" or "gpu"';

const POOL_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const poolNameSchema = z.string().regex(POOL_NAME, {
  error: (issue) => `${POOL_NAME_EXPECTED}, received ${JSON.stringify(issue.input)}`,
});

/** Whether `text` is a valid pool name. */
export function isPoolName(text: string): boolean {
  return POOL_NAME.test(text);
}
