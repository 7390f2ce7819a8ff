import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { trackerWebhookVerifier } from "../src/index.ts";

const SECRET = "It's a Secret to Everybody";
const sign = (body: string, secret = SECRET) =>
  `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
const github = trackerWebhookVerifier("github");

describe("GitHub issue webhooks", () => {
  it("accepts GitHub's documented example signature", () => {
    // GitHub docs, "Validating webhook deliveries": this secret and payload give this signature.
    const headers = {
      "X-Hub-Signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    };
    expect(github.verify(headers, "Hello, World!", SECRET)).toBe(true);
  });

  it("refuses a wrong secret, a changed body, a missing or malformed header", () => {
    const body = '{"action":"opened"}';
    expect(github.verify({ "x-hub-signature-256": sign(body, "other") }, body, SECRET)).toBe(false);
    expect(github.verify({ "x-hub-signature-256": sign(body) }, `${body} `, SECRET)).toBe(false);
    expect(github.verify({}, body, SECRET)).toBe(false);
    expect(github.verify({ "x-hub-signature-256": "sha1=abc" }, body, SECRET)).toBe(false);
  });

  it("reduces issues and issue comments to a re-read, and ignores pull requests and pings", () => {
    const headers = (event: string) => ({ "x-github-event": event, "x-github-delivery": "d-1" });
    expect(
      github.parse(headers("issues"), JSON.stringify({ action: "labeled", issue: { number: 4 } })),
    ).toEqual({
      deliveryId: "d-1",
      issueId: "4",
      what: "issue",
    });
    expect(
      github.parse(headers("issue_comment"), JSON.stringify({ action: "created", issue: { number: 4 } })),
    ).toEqual({ deliveryId: "d-1", issueId: "4", what: "comment" });
    const onPull = JSON.stringify({ action: "created", issue: { number: 5, pull_request: { url: "x" } } });
    expect(github.parse(headers("issue_comment"), onPull)).toBeNull();
    expect(github.parse(headers("ping"), "{}")).toBeNull();
    expect(github.parse(headers("issues"), "not json")).toBeNull();
  });
});
