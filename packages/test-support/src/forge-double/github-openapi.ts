/**
 * GitHub's official OpenAPI description (`@octokit/openapi`, api.github.com) as a validator:
 * every request the GitHub double accepts and every response it sends is checked against the
 * operation's parameters, request body and response schema, so a test fails when an adapter
 * sends or expects something GitHub does not. Loaded once per process (about 3 s), each
 * operation compiled on first use.
 *
 * `instanceOf` builds a body that satisfies a schema from the document itself (every required
 * property, nulls where nullable, the first enum value): the double overlays the fields it
 * means on it, and validation then checks both.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: Schema;
}
interface Operation {
  operationId: string;
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: Schema }> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, unknown>>;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export class GitHubOpenApi {
  readonly #doc: OpenApiDocument;
  readonly #ajv: Ajv;
  readonly #coercing: Ajv;
  readonly #compiled = new Map<string, ValidateFunction>();

  private constructor(doc: OpenApiDocument) {
    nullableWithoutType(doc);
    this.#doc = doc;
    this.#ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    this.#ajv.addSchema({ $id: "github", paths: doc.paths, components: doc.components });
    this.#coercing = addFormats(new Ajv({ strict: false, coerceTypes: "array" }));
  }

  static #instance: GitHubOpenApi | undefined;

  /** The api.github.com description, loaded once per process. */
  static load(): GitHubOpenApi {
    if (!GitHubOpenApi.#instance) {
      const require = createRequire(import.meta.url);
      const root = path.dirname(require.resolve("@octokit/openapi/package.json"));
      const file = path.join(root, "generated", "api.github.com.json");
      GitHubOpenApi.#instance = new GitHubOpenApi(JSON.parse(readFileSync(file, "utf8")) as OpenApiDocument);
    }
    return GitHubOpenApi.#instance;
  }

  operation(method: string, template: string): Operation {
    const operation = this.#doc.paths[template]?.[method.toLowerCase()];
    if (!operation) throw new Error(`GitHub's OpenAPI description has no ${method} ${template}.`);
    return operation;
  }

  /** Problems of a request: unknown or invalid parameters, an invalid body. Empty when valid. */
  checkRequest(
    method: string,
    template: string,
    params: { path: Record<string, string>; query: URLSearchParams; body: unknown },
  ): string[] {
    const operation = this.operation(method, template);
    const problems: string[] = [];
    const declared = (operation.parameters ?? []).map((p) => this.#resolve<Parameter>(p));
    for (const name of new Set(params.query.keys())) {
      const parameter = declared.find((p) => p.in === "query" && p.name === name);
      if (!parameter) {
        problems.push(`query parameter ${name} is not a parameter of ${operation.operationId}`);
        continue;
      }
      const value: unknown =
        parameter.schema.type === "array" ? params.query.getAll(name) : params.query.get(name);
      const holder = { value };
      const valid = this.#coercing.validate(
        { type: "object", properties: { value: parameter.schema } },
        holder,
      );
      if (!valid) problems.push(`query parameter ${name}=${String(value)}: ${this.#coercing.errorsText()}`);
    }
    for (const parameter of declared.filter((p) => p.in === "query" && p.required)) {
      if (!params.query.has(parameter.name)) problems.push(`query parameter ${parameter.name} is required`);
    }
    for (const parameter of declared.filter((p) => p.in === "path")) {
      const holder = { value: params.path[parameter.name] };
      if (!this.#coercing.validate({ type: "object", properties: { value: parameter.schema } }, holder)) {
        problems.push(`path parameter ${parameter.name}: ${this.#coercing.errorsText()}`);
      }
    }
    const bodySchema = operation.requestBody?.content["application/json"];
    // A request body the description marks optional (`required: false`) may be left out.
    const leftOut = operation.requestBody?.required !== true && params.body === undefined;
    if (bodySchema && !leftOut) {
      const validate = this.#validator(
        `${pointer(template)}/${method.toLowerCase()}/requestBody/content/application~1json/schema`,
      );
      if (!validate(params.body)) problems.push(`request body: ${this.#ajv.errorsText(validate.errors)}`);
    } else if (!bodySchema && params.body !== undefined) {
      problems.push(`${operation.operationId} takes no request body`);
    }
    return problems.map((p) => `${method} ${template} (${operation.operationId}): ${p}`);
  }

  /** Problems of a response: a status the operation does not declare, or a body its schema refuses. */
  checkResponse(method: string, template: string, status: number, body: unknown): string[] {
    const operation = this.operation(method, template);
    const declared = operation.responses[String(status)];
    const where = `${method} ${template} (${operation.operationId}) → ${status}`;
    if (!declared) {
      return [`${where}: status not declared (declared: ${Object.keys(operation.responses).join(", ")})`];
    }
    const response = declared.$ref ? this.#resolve<typeof declared>(declared) : declared;
    if (!response.content?.["application/json"]) return [];
    const base = declared.$ref
      ? `${declared.$ref.slice(1)}`
      : `${pointer(template)}/${method.toLowerCase()}/responses/${status}`;
    const validate = this.#validator(`${base}/content/application~1json/schema`);
    return validate(body) ? [] : [`${where}: ${this.#ajv.errorsText(validate.errors, { dataVar: "body" })}`];
  }

  /** A value `schema` (a `#/components/schemas/NAME` name or a response pointer) accepts, with `overlay` applied. */
  instanceOf(component: string, overlay: Record<string, unknown> = {}): Record<string, unknown> {
    const schema = this.#resolve<Schema>({ $ref: `#/components/schemas/${component}` });
    return deepMerge(this.#synthesize(schema, 0) as Record<string, unknown>, overlay);
  }

  #validator(jsonPointer: string): ValidateFunction {
    let validate = this.#compiled.get(jsonPointer);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: `github#${encodeURI(jsonPointer)}` });
      this.#compiled.set(jsonPointer, validate);
    }
    return validate;
  }

  #resolve<T>(value: T | { $ref: string }): T {
    let current: unknown = value;
    while (typeof current === "object" && current !== null && "$ref" in current) {
      const ref = (current as { $ref: string }).$ref;
      current = ref
        .slice(2)
        .split("/")
        .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
        .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], this.#doc);
    }
    return current as T;
  }

  #synthesize(input: unknown, depth: number): unknown {
    const schema = this.#resolve<Schema>(input as Schema);
    if (schema.nullable === true && depth > 0) return null;
    for (const key of ["allOf"] as const) {
      const parts = schema[key] as Schema[] | undefined;
      if (parts)
        return parts.reduce<unknown>(
          (acc, part) =>
            deepMerge(
              acc as Record<string, unknown>,
              this.#synthesize(part, depth) as Record<string, unknown>,
            ),
          {},
        );
    }
    for (const key of ["oneOf", "anyOf"] as const) {
      const options = schema[key] as Schema[] | undefined;
      if (options?.[0]) return this.#synthesize(options[0], depth);
    }
    if (Array.isArray(schema.enum)) return schema.enum[0];
    switch (schema.type) {
      case "object": {
        const properties = (schema.properties ?? {}) as Record<string, Schema>;
        const out: Record<string, unknown> = {};
        for (const name of (schema.required as string[] | undefined) ?? []) {
          out[name] = properties[name] ? this.#synthesize(properties[name], depth + 1) : null;
        }
        return out;
      }
      case "array":
        return [];
      case "integer":
      case "number":
        return typeof schema.minimum === "number" ? schema.minimum : 1;
      case "boolean":
        return false;
      case "string":
        return stringOf(schema.format as string | undefined);
      default:
        return schema.properties ? this.#synthesize({ ...schema, type: "object" }, depth) : null;
    }
  }
}

function pointer(template: string): string {
  return `/paths/${template.replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

function stringOf(format: string | undefined): string {
  switch (format) {
    case "date-time":
      return "2026-01-01T00:00:00Z";
    case "uri":
    case "url":
      return "https://forge-double.test/";
    case "email":
      return "someone@forge-double.test";
    case "uri-template":
      return "https://forge-double.test/{id}";
    default:
      return "x";
  }
}

function deepMerge(base: Record<string, unknown>, overlay: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const current = out[key];
    out[key] = isPlainObject(value) && isPlainObject(current) ? deepMerge(current, value) : value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * OpenAPI 3.0's `nullable: true` beside `anyOf`/`oneOf`/`allOf` and no `type` (the description
 * has some, e.g. `issue-field-value`), which Ajv refuses to compile, said the JSON Schema way:
 * `anyOf: [the schema, { type: "null" }]`. Changes the document in place, once, at load.
 */
function nullableWithoutType(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) nullableWithoutType(item);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const schema = node as Record<string, unknown>;
  for (const value of Object.values(schema)) nullableWithoutType(value);
  if (schema.nullable !== true || "type" in schema) return;
  const { nullable: _nullable, description, ...rest } = schema;
  for (const key of Object.keys(schema)) delete schema[key];
  Object.assign(schema, {
    ...(description === undefined ? {} : { description }),
    anyOf: [rest, { type: "null" }],
  });
}
