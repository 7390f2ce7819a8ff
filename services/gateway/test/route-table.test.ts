import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderRouteTableMarkdown } from "../src/routes/route-table-renderer.ts";
import { useGatewayFixture } from "./support/gateway-fixture.ts";

const fx = useGatewayFixture();

/** The documents that show the route table, relative to the repository root. */
const DOCUMENTS = ["services/gateway/README.md", "docs/http-api.md"];
const SECTION = /(<!-- routes:begin -->\n)([\s\S]*?)(<!-- routes:end -->)/;
const REGENERATE = "npm run docs:routes";

describe("the route table", () => {
  it.each(DOCUMENTS)("in %s is the one rendered from /openapi.json", (file) => {
    const url = new URL(`../../../${file}`, import.meta.url);
    const text = readFileSync(url, "utf8");
    const section = SECTION.exec(text);
    expect(section, `${file} has no <!-- routes:begin --> … <!-- routes:end --> section`).not.toBeNull();
    const rendered = renderRouteTableMarkdown(fx.app.openApiDocument());
    if (process.env.OVERSEER_WRITE_ROUTE_TABLES === "1" && section?.[2] !== rendered) {
      writeFileSync(
        url,
        text.replace(SECTION, (_, begin, _old, end) => `${begin}${rendered}${end}`),
      );
      return;
    }
    expect(
      section?.[2],
      `${file}'s route table differs from /openapi.json; regenerate it with ${REGENERATE}`,
    ).toBe(rendered);
  });

  it("has one row per operation, its method and path in code, and escapes pipes in summaries", () => {
    const markdown = renderRouteTableMarkdown({
      paths: {
        "/a/{id}": {
          get: { tags: ["Things"], summary: "Read a | b" },
          post: { tags: ["Things"], summary: "Write" },
        },
        "/b": { get: { tags: ["Other things"], summary: "List" } },
        "/c": { delete: { tags: ["Things"], summary: "Remove" } },
      },
    });
    expect(markdown.split("\n")).toEqual([
      "| Family | Route | What it does |",
      "| --- | --- | --- |",
      "| Things | `GET /a/{id}` | Read a \\| b |",
      "| Things | `POST /a/{id}` | Write |",
      "| Things | `DELETE /c` | Remove |",
      "| Other things | `GET /b` | List |",
      "",
    ]);
  });
});
