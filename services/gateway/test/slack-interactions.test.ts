import { decisionButtonValue } from "@overseer/api-contract";
import { createApiToken, getDecision, listEvents, revokeApiToken } from "@overseer/db";
import { SlackDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySlackSignature } from "../src/routes/slack/slack-signature.ts";
import { card, raiseQuestion, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";
import { stateSignature } from "./support/state-signature.ts";

const PATH = "/api/v1/slack/interactions";
const ALICE = "U0ALICE01";
const BOB = "U0BOB0001";
const READER = "U0READER1";
const REVOKED = "U0GONE001";
const STRANGER = "U0NOBODY1";

const slack = await SlackDouble.start();
afterAll(() => slack.close());
/** Slack user → token id; filled once the fixture's tokens exist (the gateway reads it per click). */
const operators: Record<string, string> = {};
const fx = useGatewayFixture({
  slackSigningSecret: slack.signingSecret,
  slackResponseOrigin: slack.origin,
  slackOperators: operators,
});
const unconfigured = useGatewayFixture();

beforeAll(async () => {
  const mapped = async (slackUser: string, name: string, scope: "read" | "operate" | "admin") => {
    const token = await createApiToken(fx.scratch.db, { name, scope });
    operators[slackUser] = token.id;
    return token;
  };
  await mapped(ALICE, "alice", "operate");
  await mapped(BOB, "bob", "admin");
  await mapped(READER, "rita", "read");
  await revokeApiToken(fx.scratch.db, (await mapped(REVOKED, "gone", "admin")).id);
});

/** A click on the card's button for `optionId`, as Slack sends it (signed now unless told). */
function click(
  projectId: string,
  decisionId: string,
  optionId: string,
  user: string,
  extra: { timestamp?: number; secret?: string; responseUrl?: string; note?: string } = {},
) {
  const request = slack.click({
    userId: user,
    actionId: `overseer_resolve:${optionId}`,
    value: decisionButtonValue({ project_id: projectId, decision_id: decisionId, option_id: optionId }),
    ...extra,
  });
  return fx.request("POST", PATH, { token: null, rawBody: request.body, headers: request.headers });
}

describe("Slack's request signature", () => {
  it("verifies Slack's own worked example (docs: Verifying requests from Slack)", () => {
    const body =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    const input = {
      secret: "8f742231b10e8888abcd99yyyzzz85a5",
      body,
      timestamp: "1531420618",
      signature: "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
      nowSeconds: 1531420618 + 60,
    };
    expect(() => verifySlackSignature(input)).not.toThrow();
    expect(() => verifySlackSignature({ ...input, body: `${body}x` })).toThrow(/does not match/);
    expect(() => verifySlackSignature({ ...input, nowSeconds: 1531420618 + 301 })).toThrow(/more than 300 s/);
  });
});

describe("POST /api/v1/slack/interactions", () => {
  it("resolves the card once through the resolve command; a second click answers who chose what", async () => {
    await seedProject(fx, "sl", [card("S00-001")]);
    const q = await raiseQuestion(fx, "sl");
    const first = await click("sl", q.decisionId, "use_postgres", ALICE);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      outcome: "resolved",
      project_id: "sl",
      decision_id: q.decisionId,
      selected_option: "use_postgres",
      resolved_by: "slack:alice",
      message_updated: true,
    });
    const decision = await getDecision(fx.scratch.db, "sl", q.decisionId);
    expect(decision).toMatchObject({
      status: "resolved",
      selectedOption: "use_postgres",
      resolvedBy: "slack:alice",
    });

    // The same click again (a double click), and another operator's click on another option.
    const again = await click("sl", q.decisionId, "use_postgres", ALICE);
    const other = await click("sl", q.decisionId, "use_sqlite", BOB);
    for (const late of [again, other]) {
      expect(late.status, late.text).toBe(200);
      expect(late.body).toMatchObject({
        outcome: "already_resolved",
        selected_option: "use_postgres",
        resolved_by: "slack:alice",
        message_updated: true,
      });
    }
    const resolvedEvents = await listEvents(fx.scratch.db, { projectId: "sl", types: ["decision.resolved"] });
    expect(resolvedEvents).toHaveLength(1);
    expect(await getDecision(fx.scratch.db, "sl", q.decisionId)).toEqual(decision);

    // The first click replaced the message (valid Block Kit, checked by the double) with who chose
    // what, buttons gone; the late clicks told their clicker alone and left the message as it is.
    expect(slack.refusedResponses).toEqual([]);
    const [replaced, ...told] = slack.responses.slice(-3).map((r) => r.message);
    expect(replaced).toMatchObject({ replace_original: true });
    expect(replaced?.text).toContain("slack:alice chose Use Postgres");
    expect(JSON.stringify(replaced?.blocks)).toContain("*slack:alice* chose *Use Postgres*");
    expect(JSON.stringify(replaced?.blocks)).not.toContain("overseer_resolve");
    for (const late of told) {
      expect(late).toMatchObject({ response_type: "ephemeral", replace_original: false });
      expect(late?.text).toContain("Already resolved by slack:alice: *Use Postgres*");
    }
  });

  it("an option that needs a note: without one the clicker alone is told (422); with the note field's text it resolves", async () => {
    await seedProject(fx, "nt", [card("S00-001")]);
    const q = await raiseQuestion(fx, "nt");
    const before = await stateSignature(fx);
    const bare = await click("nt", q.decisionId, "use_sqlite", ALICE, { note: "   " });
    expect(bare.status).toBe(422);
    expect(bare.body.error.code).toBe("note_required");
    expect(await stateSignature(fx)).toEqual(before);
    const told = slack.responses.at(-1)?.message;
    expect(told).toMatchObject({ response_type: "ephemeral", replace_original: false });
    expect(told?.text).toContain("Write it in the note field, then click again.");

    const noted = await click("nt", q.decisionId, "use_sqlite", ALICE, { note: " Only for the demo. " });
    expect(noted.status, noted.text).toBe(200);
    expect(noted.body).toMatchObject({ outcome: "resolved", selected_option: "use_sqlite" });
    expect(await getDecision(fx.scratch.db, "nt", q.decisionId)).toMatchObject({
      note: "Only for the demo.",
      resolvedBy: "slack:alice",
    });
    expect(JSON.stringify(slack.responses.at(-1)?.message.blocks)).toContain("> Only for the demo.");
    expect(slack.refusedResponses).toEqual([]);
  });

  it("two concurrent clicks resolve once", async () => {
    await seedProject(fx, "dbl", [card("S00-001")]);
    const q = await raiseQuestion(fx, "dbl");
    const both = await Promise.all([
      click("dbl", q.decisionId, "use_postgres", ALICE),
      click("dbl", q.decisionId, "use_postgres", BOB),
    ]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(both.map((r) => r.body.outcome).sort()).toEqual(["already_resolved", "resolved"]);
    const events = await listEvents(fx.scratch.db, { projectId: "dbl", types: ["decision.resolved"] });
    expect(events).toHaveLength(1);
  });

  it("refuses a bad signature, a replayed old timestamp and a missing one (401), changing nothing", async () => {
    await seedProject(fx, "sig", [card("S00-001")]);
    const q = await raiseQuestion(fx, "sig");
    const before = await stateSignature(fx);
    const forged = await click("sig", q.decisionId, "use_postgres", ALICE, { secret: "not-the-app-secret" });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe("bad_signature");
    expect(forged.body.error.message).toContain("OVERSEER_SLACK_SIGNING_SECRET");

    const old = Math.floor(Date.now() / 1000) - 6 * 60;
    const replayed = await click("sig", q.decisionId, "use_postgres", ALICE, { timestamp: old });
    expect(replayed.status).toBe(401);
    expect(replayed.body.error).toMatchObject({ code: "stale_request", details: { max_age_seconds: 300 } });
    expect(replayed.body.error.message).toContain("replay");

    const request = slack.click({ userId: ALICE, actionId: "overseer_resolve:use_postgres", value: "{}" });
    const unsigned = await fx.request("POST", PATH, {
      token: null,
      rawBody: request.body,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(unsigned.status).toBe(401);
    expect(await stateSignature(fx)).toEqual(before);
    expect((await getDecision(fx.scratch.db, "sig", q.decisionId))?.status).toBe("pending");
  });

  it("refuses an unknown Slack user, a revoked token and a read-only token (403), changing nothing", async () => {
    await seedProject(fx, "who", [card("S00-001")]);
    const q = await raiseQuestion(fx, "who");
    const before = await stateSignature(fx);
    const stranger = await click("who", q.decisionId, "use_postgres", STRANGER);
    expect(stranger.status).toBe(403);
    expect(stranger.body.error).toMatchObject({
      code: "unknown_slack_user",
      details: { slack_user_id: STRANGER },
    });
    expect(stranger.body.error.message).toContain(
      `add ${STRANGER}=<API token id> to OVERSEER_SLACK_OPERATORS`,
    );
    const revoked = await click("who", q.decisionId, "use_postgres", REVOKED);
    expect(revoked.status).toBe(403);
    expect(revoked.body.error.message).toContain("revoked");
    const reader = await click("who", q.decisionId, "use_postgres", READER);
    expect(reader.status).toBe(403);
    expect(reader.body.error).toMatchObject({ code: "forbidden", details: { required_scope: "operate" } });
    expect(await stateSignature(fx)).toEqual(before);
  });

  it("answers a click that is not a decision button 400, a form-less body 415, and 503 unconfigured", async () => {
    const request = slack.click({ userId: ALICE, actionId: "something_else", value: "x" });
    const foreign = await fx.request("POST", PATH, {
      token: null,
      rawBody: request.body,
      headers: request.headers,
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe("invalid_interaction");
    const json = await fx.request("POST", PATH, { token: null, body: { payload: "{}" } });
    expect(json.status).toBe(415);
    const off = await unconfigured.request("POST", PATH, {
      token: null,
      rawBody: request.body,
      headers: request.headers,
    });
    expect(off.status).toBe(503);
    expect(off.body.error.message).toContain("OVERSEER_SLACK_SIGNING_SECRET");
  });
});
