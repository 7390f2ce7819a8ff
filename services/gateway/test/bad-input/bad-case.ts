import type { RaisedQuestion, RequestOptions } from "../support/gateway-fixture.ts";

/**
 * One bad request for bad-input.test.ts, run against project `bad` (S00-001 blocked on a raised
 * question, its resolver awaiting input, S00-002 todo).
 */
export interface BadCase {
  name: string;
  method: string;
  /** The path, or how to build it from the raised question's ids (known once `beforeAll` ran). */
  path: string | ((q: RaisedQuestion) => string);
  init?: RequestOptions;
  /** Exact status expected; any 4xx when omitted. */
  status?: number;
  /** A substring the error message must contain (the field it names). */
  mentions?: string;
}

export const resolvePath = (q: RaisedQuestion) => `/api/projects/bad/decisions/${q.decisionId}/resolve`;
export const answerPath = (q: RaisedQuestion) => `/api/projects/bad/backlog/${q.resolverId}/answer`;
export const releasePath = (q: RaisedQuestion) =>
  `/api/v1/projects/bad/tasks/${q.resolverId}/release-external`;
export const json = (body: unknown): RequestOptions => ({ body });
export const raw = (rawBody: string, type?: string): RequestOptions => ({
  rawBody,
  headers: type ? { "Content-Type": type } : {},
});
