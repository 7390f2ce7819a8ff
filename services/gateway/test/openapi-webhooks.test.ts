// The OpenAPI document's `webhooks` section (OpenAPI 3.1): one entry per notification type, each
// the signed POST of the versioned payload schema from @overseer/api-contract.
import SwaggerParser from "@apidevtools/swagger-parser";
import { WEBHOOK_PAYLOAD_VERSION, WEBHOOK_TEST_TYPE } from "@overseer/api-contract";
import { NOTIFICATION_TYPES } from "@overseer/domain";
import { webhookPayloadOf } from "@overseer/notify";
import { describe, expect, it } from "vitest";
import { useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

type Doc = {
  openapi: string;
  webhooks: Record<
    string,
    {
      post: {
        parameters: { name: string; in: string; required?: boolean }[];
        requestBody: { content: { "application/json": { schema: { $ref: string } } } };
      };
    }
  >;
  components: {
    schemas: Record<
      string,
      { properties: { type: { enum?: string[]; const?: string }; version: unknown; data: unknown } }
    >;
  };
};

describe("OpenAPI webhooks", () => {
  it("is an OpenAPI 3.1 document that validates and names every notification type in `webhooks`", async () => {
    const doc = fx.app.openApiDocument() as unknown as Doc;
    expect(doc.openapi).toBe("3.1.0");
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    expect(Object.keys(doc.webhooks).sort()).toEqual([...NOTIFICATION_TYPES, WEBHOOK_TEST_TYPE].sort());
    for (const [type, item] of Object.entries(doc.webhooks)) {
      const headers = item.post.parameters.filter((p) => p.in === "header");
      expect(headers.map((h) => h.name).sort(), type).toEqual([
        "webhook-id",
        "webhook-signature",
        "webhook-timestamp",
      ]);
      expect(headers.every((h) => h.required)).toBe(true);
      const ref = item.post.requestBody.content["application/json"].schema.$ref;
      const schema = doc.components.schemas[ref.replace("#/components/schemas/", "")];
      const discriminator = schema?.properties.type;
      expect(discriminator?.const ?? discriminator?.enum?.[0], type).toBe(type);
      expect(schema?.properties.version).toBeDefined();
      expect(schema?.properties.data).toBeDefined();
    }
  });

  it("describes the payload the coordinator actually sends", () => {
    const payload = webhookPayloadOf(
      {
        type: "project.paused",
        severity: "warning",
        project_id: "demo",
        task_id: null,
        event_id: "42",
        data: { bound: "budget", reason: "budget_usd 5 reached" },
        created_at: new Date("2026-01-01T00:00:00Z"),
      },
      "https://overseer.example",
    );
    const doc = fx.app.openApiDocument() as unknown as Doc;
    const schema = doc.components.schemas.WebhookPayload_project_paused;
    expect(Object.keys(schema?.properties ?? {}).sort()).toEqual(Object.keys(payload).sort());
    expect(payload).toMatchObject({ type: "project.paused", version: WEBHOOK_PAYLOAD_VERSION });
  });
});
