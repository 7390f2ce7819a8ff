import fc from "fast-check";

/**
 * Bad-input generation from the gateway's OpenAPI document: every operation, every path,
 * query and header parameter, and every body property, is given hostile values (boundary
 * integers, NUL, lone surrogates, invalid UTF-8, huge arrays, deep nesting, wrong types,
 * unknown keys), one or a few at a time over an otherwise plausible request.
 */

type Schema = Record<string, unknown>;

export interface OperationParameter {
  readonly name: string;
  readonly in: "path" | "query" | "header";
  /** The parameter's declared schema (`type: "integer"` for counts and page sizes). */
  readonly schema: Schema;
}

export interface Operation {
  /** `operationId`: the operation's row in the authorization table. */
  readonly operationId: string;
  readonly method: string;
  /** OpenAPI path template, `/api/v1/projects/{id}`. */
  readonly path: string;
  readonly parameters: readonly OperationParameter[];
  /** Resolved JSON body schema, when the operation takes a body. */
  readonly bodySchema: Schema | undefined;
  readonly acceptsYaml: boolean;
  /** Answers with a server-sent event stream (`text/event-stream`). */
  readonly streams: boolean;
}

/** Every operation of the document, body schemas resolved through `components.schemas`. */
export function operationsOf(doc: Record<string, unknown>): Operation[] {
  const paths = doc.paths as Record<string, Record<string, Schema>>;
  const components = ((doc.components as Schema | undefined)?.schemas ?? {}) as Record<string, Schema>;
  const resolve = (schema: Schema | undefined): Schema | undefined => {
    const ref = schema?.$ref;
    return typeof ref === "string" ? components[ref.replace("#/components/schemas/", "")] : schema;
  };
  const operations: Operation[] = [];
  for (const [path, byMethod] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(byMethod)) {
      const content = (op.requestBody as Schema | undefined)?.content as Record<string, Schema> | undefined;
      const responses = Object.values((op.responses ?? {}) as Record<string, Schema>);
      operations.push({
        operationId: String(op.operationId),
        method: method.toUpperCase(),
        path,
        parameters: ((op.parameters ?? []) as Schema[]).map((p) => ({
          name: String(p.name),
          in: p.in as OperationParameter["in"],
          schema: (p.schema ?? {}) as Schema,
        })),
        bodySchema: content ? resolve(content["application/json"]?.schema as Schema) : undefined,
        acceptsYaml: content !== undefined && "application/yaml" in content,
        streams: responses.some((r) => "text/event-stream" in ((r.content ?? {}) as Schema)),
      });
    }
  }
  return operations;
}

/** Ids that exist in the seeded project, so hostile values also reach handlers past the lookups. */
export interface KnownIds {
  readonly projectId: string;
  readonly taskId: string;
  readonly itemId: string;
  readonly decisionId: string;
  readonly runId: string;
  readonly tokenId: string;
}

/** A plausible value for a path parameter, by name and route family. */
export function knownPathValue(op: Operation, name: string, ids: KnownIds): string {
  if (name === "id") return /^\/api(\/v1)?\/runs\//.test(op.path) ? ids.runId : ids.projectId;
  if (name === "task_id") return ids.taskId;
  if (name === "item_id") return ids.itemId;
  if (name === "decision_id") return ids.decisionId;
  if (name === "token_id") return ids.tokenId;
  return "x";
}

/** A plausible body from the schema: examples when given, else minimal values of each type. */
export function plausibleBody(schema: Schema | undefined, ids: KnownIds): unknown {
  if (!schema) return undefined;
  const type = schema.type;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (type === "object" || schema.properties) {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set((schema.required ?? []) as string[]);
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(properties)) {
      if (!required.has(key)) continue;
      out[key] = key === "id" && properties.repo ? "fuzzed" : plausibleBody(child, ids);
    }
    return out;
  }
  if (type === "array") return [];
  if (type === "integer" || type === "number") return 1;
  if (type === "boolean") return true;
  if (type === "string") return "plain text";
  return null;
}

/** A value serialised as arrays or objects nested `depth` deep (written without recursion). */
export class DeepNesting {
  constructor(
    readonly depth: number,
    readonly kind: "array" | "object",
  ) {}
  toText(): string {
    return this.kind === "array"
      ? `${"[".repeat(this.depth)}${"]".repeat(this.depth)}`
      : `${'{"a":'.repeat(this.depth)}1${"}".repeat(this.depth)}`;
  }
}

/** Bytes sent as the body as they are (invalid UTF-8, malformed JSON, BOMs…). */
export class RawBody {
  constructor(
    readonly bytes: Uint8Array | string,
    readonly contentType = "application/json",
  ) {}
}

/** JSON text of a value that may contain `DeepNesting` anywhere. */
export function toJsonText(value: unknown): string {
  if (value instanceof DeepNesting) return value.toText();
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`)
      .join(",")}}`;
  const text = JSON.stringify(value);
  return text === undefined ? "null" : text;
}

const BOUNDARY_NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.5,
  2_147_483_647,
  2_147_483_648,
  -2_147_483_649,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER - 2,
  1e308,
  -1e308,
  5e-324,
];

const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udc00y",
  "\ud83d",
  "\u202e",
  "line\nbreak",
  "x".repeat(70_000),
  "[[[",
  "**/{a,b",
  "../../etc/passwd",
  "/etc/passwd",
  "ext::sh -c id",
  "ssh://-oProxyCommand=id/x",
  "-oProxyCommand=id:x",
  "' OR 1=1 --",
  "$" + "{jndi:ldap://x}",
  "9223372036854775808",
  "0000-01-01T00:00:00Z",
  "custom",
  "stop",
];

/** Hostile JSON values of every type. */
export function hostileJsonValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(...BOUNDARY_NUMBERS),
    fc.constantFrom(...HOSTILE_STRINGS),
    fc.string({ unit: "binary", maxLength: 30 }),
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.constantFrom(null, true, false, {}, [], [null], { "": null }),
    fc.constantFrom(
      Array.from({ length: 20_000 }, () => 0),
      Array.from({ length: 3000 }, () => "x"),
      Array.from({ length: 500 }, (_, i) => ({ id: `S09-${i}`, title: "t" })),
    ),
    fc.constantFrom(
      new DeepNesting(20_000, "array"),
      new DeepNesting(20_000, "object"),
      new DeepNesting(65, "array"),
      new DeepNesting(63, "object"),
    ),
    fc.jsonValue({ maxDepth: 3 }),
    fc.dictionary(fc.string({ unit: "binary", maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), {
      maxKeys: 4,
    }),
  );
}

/** Whole-body replacements: hostile values, raw malformed or mis-encoded bytes. */
export function hostileBody(acceptsYaml: boolean): fc.Arbitrary<unknown> {
  return fc.oneof(hostileJsonValue(), fc.constantFrom(...rawBodies(acceptsYaml)));
}

/** Malformed, mis-encoded or mistyped raw bodies (YAML ones too where the operation takes YAML). */
export function rawBodies(acceptsYaml: boolean): RawBody[] {
  const raws = [
    new RawBody('{"text": '),
    new RawBody("{'a': 1}"),
    new RawBody("\ufeff{}"),
    new RawBody(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])),
    new RawBody(new Uint8Array([0xff, 0xfe, 0x00, 0x00])),
    new RawBody('{"a":"\\ud800"}'),
    new RawBody('{"a\\u0000":1}'),
    new RawBody("1e999999"),
    new RawBody('{"a":1,"a":2}'),
    new RawBody("{}", "text/plain"),
  ];
  if (acceptsYaml)
    raws.push(
      new RawBody(`tasks: ${"[".repeat(20_000)}`, "application/yaml"),
      new RawBody(`tasks:\n${"- ".repeat(5000)}x\n`, "application/yaml"),
      new RawBody('- id: S09-1\n  title: "\\0"\n', "application/yaml"),
      new RawBody('- id: S09-2\n  title: "\\ud800"\n', "application/yaml"),
      new RawBody("a: &a [*a]\n", "application/yaml"),
      new RawBody(`x: &x ${"[*x,".repeat(50)}\n`, "application/yaml"),
      new RawBody("tasks: []\n", "application/yaml"),
    );
  return raws;
}

/** The boundary values every parameter is swept with (`hostileUrlText` draws from these too). */
export const SWEPT_URL_VALUES: readonly string[] = [
  "-1",
  "0",
  "2147483648",
  "9223372036854775807",
  "9223372036854775808",
  "99999999999999999999",
  "1e309",
  "1.5",
  "",
  "%00",
  "a%00b",
  "%ED%A0%80",
  "%C3%28",
  "%",
  "..%2F..%2Fetc",
  "0000-01-01T00:00:00Z",
  "9999-12-31T23:59:59-23:59",
  "a".repeat(5000),
  "%0A",
  "null",
];

/** Hostile URL values drawn at random besides `SWEPT_URL_VALUES`. */
const MORE_HOSTILE_URL_VALUES: readonly string[] = [
  "1",
  "9007199254740993",
  "0x1F",
  "NaN",
  "Infinity",
  "%FF",
  "..",
  "%2e%2e",
  "2024-02-30T00:00:00Z",
  "275760-09-13T00:00:00Z",
  "true",
  "%5B%5D",
  "a".repeat(10_000),
  "%E2%80%AE",
  "todo,todo,todo",
  "0-0",
  "99999999999999999999-99999999999999999999",
  "stored",
];

/** Hostile text for a URL path segment, query value or header, already percent-encoded where needed. */
export function hostileUrlText(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...SWEPT_URL_VALUES, ...MORE_HOSTILE_URL_VALUES),
    fc.string({ unit: "binary", maxLength: 20 }).map(encodeLoosely),
    fc.bigInt().map(String),
    fc.double().map(String),
  );
}

/** `encodeURIComponent`, except that lone surrogates (which it refuses) become raw `%ED%A0%80`. */
function encodeLoosely(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return `${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ""))}%ED%A0%80`;
  }
}

/** The values every body property (and the body itself) is swept with. */
export const SWEPT_JSON_VALUES: readonly unknown[] = [
  "a\u0000b",
  "x\ud800",
  "",
  "x".repeat(70_000),
  "[[[",
  -1,
  2_147_483_648,
  Number.MAX_SAFE_INTEGER + 2,
  1e308,
  0.5,
  null,
  true,
  {},
  [],
  Array.from({ length: 20_000 }, () => 0),
  new DeepNesting(20_000, "array"),
];

/**
 * Single mutations covering every parameter and body property of `op` with every swept
 * value, plus every raw body: the systematic half of the suite (the other half is random).
 */
export function sweptMutations(op: Operation): Mutation[][] {
  const out: Mutation[][] = [];
  for (const p of op.parameters)
    for (const value of SWEPT_URL_VALUES) out.push([{ at: p.in, name: p.name, value }]);
  if (op.method !== "GET" && op.method !== "DELETE") {
    const properties = Object.keys((op.bodySchema?.properties ?? {}) as Record<string, unknown>);
    for (const name of [...properties, "unknown_key"])
      for (const value of SWEPT_JSON_VALUES) out.push([{ at: "body-field", name, value }]);
    for (const value of SWEPT_JSON_VALUES) out.push([{ at: "body", value }]);
    for (const raw of rawBodies(op.acceptsYaml)) out.push([{ at: "body", value: raw }]);
  }
  if (op.parameters.length === 0 && !op.bodySchema)
    for (const value of SWEPT_URL_VALUES.slice(0, 5)) out.push([{ at: "query", name: "unexpected", value }]);
  return out;
}

/** One change to a plausible request. */
export type Mutation =
  | { readonly at: "path" | "query" | "header"; readonly name: string; readonly value: string }
  | { readonly at: "body"; readonly value: unknown }
  | { readonly at: "body-field"; readonly name: string; readonly value: unknown };

/** One to three mutations of an operation, over every parameter and body property it has. */
export function mutationsFor(op: Operation): fc.Arbitrary<Mutation[]> {
  const choices: fc.Arbitrary<Mutation>[] = [];
  for (const p of op.parameters) {
    choices.push(hostileUrlText().map((value) => ({ at: p.in, name: p.name, value })));
  }
  const properties = Object.keys((op.bodySchema?.properties ?? {}) as Record<string, unknown>);
  if (op.method !== "GET" && op.method !== "DELETE") {
    choices.push(hostileBody(op.acceptsYaml).map((value) => ({ at: "body" as const, value })));
    const names = fc.oneof(fc.constantFrom(...properties, "unknown_key"), fc.string({ maxLength: 6 }));
    choices.push(
      fc.record({ name: names, value: hostileJsonValue() }).map((m) => ({ at: "body-field" as const, ...m })),
    );
  }
  // Operations without parameters or body still get unexpected queries.
  choices.push(hostileUrlText().map((value) => ({ at: "query" as const, name: "unexpected", value })));
  return fc.array(fc.oneof(...choices), { minLength: 1, maxLength: 3 });
}
