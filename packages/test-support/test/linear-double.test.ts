import { LinearDocument } from "@linear/sdk";
import { parse, validate, validateSchema } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LinearDouble } from "../src/index.ts";
import { linearSchema } from "../src/tracker-double/linear-schema.ts";

describe("Linear's schema rebuilt from @linear/sdk", () => {
  it("is a valid schema, and every document the SDK itself sends validates against it", () => {
    const schema = linearSchema();
    expect(validateSchema(schema)).toEqual([]);
    const documents = Object.entries(LinearDocument as Record<string, unknown>).filter(([name]) =>
      name.endsWith("Document"),
    );
    expect(documents.length).toBeGreaterThan(500);
    const refused = documents.flatMap(([name, document]) =>
      validate(schema, parse(String(document))).map((error) => `${name}: ${error.message}`),
    );
    expect(refused).toEqual([]);
  });

  it("refuses what Linear lacks", () => {
    const schema = linearSchema();
    const errors = validate(schema, parse('{ issue(id: "x") { id labelNames } }'));
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^Cannot query field "labelNames" on type "Issue"/),
    ]);
  });
});

describe("the Linear double", () => {
  let linear: LinearDouble;
  beforeAll(async () => {
    linear = await LinearDouble.start();
  });
  afterAll(async () => {
    await linear.close();
  });

  it("answers a query Linear would refuse with a GraphQL validation error and records the violation", async () => {
    const response = await fetch(linear.apiUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: linear.bot.apiKey },
      body: JSON.stringify({ query: "{ viewer { id githubLogin } }" }),
    });
    expect(response.status).toBe(400);
    expect(linear.takeViolations()).toEqual([
      expect.stringMatching(/Cannot query field "githubLogin" on type "User"/),
    ]);
  });

  it("refuses an unknown key as Linear does, with an authentication error", async () => {
    const response = await fetch(linear.apiUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "lin_api_nobody" },
      body: JSON.stringify({ query: "{ viewer { id } }" }),
    });
    const body = (await response.json()) as { errors: { extensions: { type: string } }[] };
    expect(body.errors[0]?.extensions.type).toBe("authentication error");
  });
});
