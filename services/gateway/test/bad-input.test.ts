import { describe, expect, it } from "vitest";
import type { BadCase } from "./bad-input/bad-case.ts";
import { BODY_CASES } from "./bad-input/body-cases.ts";
import { CREATION_CASES } from "./bad-input/creation-cases.ts";
import { ID_CASES } from "./bad-input/id-cases.ts";
import { QUERY_CASES } from "./bad-input/query-cases.ts";
import { RED_TEAM_CASES } from "./bad-input/red-team-cases.ts";
import { STATE_MACHINE_CASES } from "./bad-input/state-machine-cases.ts";
import { useGatewayFixture, useRaisedQuestion } from "./support/gateway-fixture.ts";
import { stateSignature } from "./support/state-signature.ts";

const fx = useGatewayFixture();
const q = useRaisedQuestion(fx, "bad");

/** The tables by concern, in the order they run; all share this file's fixture and question. */
const CASES: readonly BadCase[] = [
  ...BODY_CASES,
  ...ID_CASES,
  ...QUERY_CASES,
  ...CREATION_CASES,
  ...RED_TEAM_CASES,
  ...STATE_MACHINE_CASES,
];

describe("bad input gets a 4xx, a JSON error, and changes nothing", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const before = await stateSignature(fx);
      const path = typeof c.path === "function" ? c.path(q) : c.path;
      const res = await fx.request(c.method, path, { token: fx.tokens.admin, ...c.init });
      if (c.status !== undefined) expect(res.status, res.text.slice(0, 300)).toBe(c.status);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body?.error, res.text.slice(0, 300)).toMatchObject({
        code: expect.any(String),
        message: expect.any(String),
      });
      expect(typeof res.body.error.details).toBe("object");
      if (c.mentions) expect(res.body.error.message).toContain(c.mentions);
      expect(await stateSignature(fx)).toEqual(before);
    });
  }

  it("logged no unexpected error for any of them", () => {
    expect(fx.logLines.filter((l) => l.includes('"level":50'))).toEqual([]);
  });
});
