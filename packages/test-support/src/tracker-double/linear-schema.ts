/**
 * Linear's GraphQL schema, as shipped in `@linear/sdk`. The SDK's npm package carries no SDL or
 * introspection file, but its type declarations are graphql-codegen's mirror of the whole schema:
 * one `type X = { __typename?: "X"; … }` per object type (interfaces joined with `&`), one
 * `type XFieldArgs` per field's arguments, input objects without `__typename`, `declare enum`s,
 * unions as `A | B`, and `Scalars`. This module reads those declarations with the TypeScript
 * compiler and writes the SDL back, so the Linear double executes every query and mutation against
 * the schema of the SDK version installed: a field, argument, input field or enum value Linear
 * lacks fails validation exactly as Linear would refuse it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { buildSchema, type GraphQLSchema } from "graphql";
import ts from "typescript";

const BUILT_IN = new Set(["ID", "String", "Boolean", "Int", "Float"]);

let cached: GraphQLSchema | undefined;

/** The schema of the installed `@linear/sdk` (built once per process). */
export function linearSchema(): GraphQLSchema {
  cached ??= buildSchema(linearSdl(), { assumeValid: true, assumeValidSDL: true });
  return cached;
}

/** The SDK's declaration file that holds the generated schema types. */
function declarationFile(): string {
  const entry = createRequire(import.meta.url).resolve("@linear/sdk");
  const dist = path.dirname(entry);
  for (const name of readdirSync(dist)) {
    if (!name.endsWith(".d.mts")) continue;
    const text = readFileSync(path.join(dist, name), "utf8");
    // Only the generated region: the SDK's hand-written webhook and client types follow it.
    const start = text.indexOf("//#region src/_generated_documents");
    if (start < 0 || !text.includes("type Scalars = {")) continue;
    const end = text.indexOf("//#endregion", start);
    return text.slice(start, end < 0 ? undefined : end);
  }
  throw new Error(`no generated schema types found in ${dist}: has @linear/sdk changed its build?`);
}

interface ObjectLike {
  readonly name: string;
  readonly interfaces: string[];
  readonly members: ts.NodeArray<ts.TypeElement>;
  readonly typename: string | null;
}

/** The SDL of Linear's schema, rebuilt from the SDK's declarations. */
export function linearSdl(): string {
  const source = ts.createSourceFile("linear.d.mts", declarationFile(), ts.ScriptTarget.Latest, false);
  const objects = new Map<string, ObjectLike>();
  const unions = new Map<string, string[]>();
  const enums: string[] = [];
  const scalars: string[] = [];
  for (const statement of source.statements) {
    if (ts.isEnumDeclaration(statement)) {
      const values = statement.members.map((m) =>
        m.initializer && ts.isStringLiteral(m.initializer) ? m.initializer.text : m.name.getText(source),
      );
      enums.push(`enum ${statement.name.text} {\n  ${values.join("\n  ")}\n}`);
      continue;
    }
    if (!ts.isTypeAliasDeclaration(statement) || statement.typeParameters) continue;
    const name = statement.name.text;
    const type = statement.type;
    if (name === "Scalars" && ts.isTypeLiteralNode(type)) {
      for (const member of type.members) {
        const key = member.name?.getText(source) ?? "";
        if (!BUILT_IN.has(key)) scalars.push(`scalar ${key}`);
      }
      continue;
    }
    const parts = ts.isIntersectionTypeNode(type) ? [...type.types] : [type];
    const literal = parts.find(ts.isTypeLiteralNode);
    if (literal) {
      const interfaces = parts.filter(ts.isTypeReferenceNode).map((p) => p.typeName.getText(source));
      if (interfaces.length + 1 !== parts.length) continue;
      objects.set(name, {
        name,
        interfaces,
        members: literal.members,
        typename: typenameOf(literal, source),
      });
      continue;
    }
    if (ts.isUnionTypeNode(type) && type.types.every(ts.isTypeReferenceNode)) {
      unions.set(
        name,
        type.types.map((t) => (t as ts.TypeReferenceNode).typeName.getText(source)),
      );
    }
  }
  return writeSdl(objects, unions, enums, scalars, source);
}

function typenameOf(literal: ts.TypeLiteralNode, source: ts.SourceFile): string | null {
  for (const member of literal.members) {
    if (member.name?.getText(source) !== "__typename" || !ts.isPropertySignature(member)) continue;
    const type = member.type;
    if (type && ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) return type.literal.text;
  }
  return null;
}

function writeSdl(
  objects: Map<string, ObjectLike>,
  unions: Map<string, string[]>,
  enums: string[],
  scalars: string[],
  source: ts.SourceFile,
): string {
  const outputTypes = [...objects.values()].filter((o) => o.typename === o.name);
  const interfaceNames = new Set(outputTypes.flatMap((o) => o.interfaces));
  const argsNames = new Set<string>();
  // codegen pascal-cases the field name (`attachmentLinkGitHubPR` → `…GitHubPrArgs`): match case-blind.
  const argsByLowerName = new Map(
    [...objects.keys()].filter((n) => n.endsWith("Args")).map((n) => [n.toLowerCase(), n] as const),
  );
  const blocks: string[] = [...scalars, ...enums];
  const outputNames = new Set(outputTypes.map((o) => o.name));
  for (const [name, members] of unions) {
    // Unions of the schema join object types; the SDK's fragment and webhook unions do not.
    if (members.every((m) => outputNames.has(m))) blocks.push(`union ${name} = ${members.join(" | ")}`);
  }
  const fieldsOf = (object: ObjectLike, withArgs: boolean): string[] =>
    object.members.filter(ts.isPropertySignature).flatMap((member) => {
      const field = member.name.getText(source);
      if (field === "__typename" || !member.type) return [];
      const type = graphqlType(member.type, source);
      if (!withArgs) return [`${field}: ${type}`];
      const argsName = argsByLowerName.get(`${object.name}${field}Args`.toLowerCase());
      const args = argsName === undefined ? undefined : objects.get(argsName);
      if (!args || argsName === undefined) return [`${field}: ${type}`];
      argsNames.add(argsName);
      return [`${field}(${fieldsOf(args, false).join(", ")}): ${type}`];
    });
  for (const object of outputTypes) {
    const implementsPart = object.interfaces.length > 0 ? ` implements ${object.interfaces.join(" & ")}` : "";
    blocks.push(`type ${object.name}${implementsPart} {\n  ${fieldsOf(object, true).join("\n  ")}\n}`);
  }
  for (const name of interfaceNames) {
    const object = objects.get(name);
    if (object) blocks.push(`interface ${name} {\n  ${fieldsOf(object, true).join("\n  ")}\n}`);
  }
  for (const object of objects.values()) {
    if (object.typename !== null || interfaceNames.has(object.name) || argsNames.has(object.name)) continue;
    // Input objects stand alone; an intersection without `__typename` is one of the SDK's own
    // helper types (its webhook payloads), not part of the schema.
    if (object.members.length === 0 || object.interfaces.length > 0) continue;
    blocks.push(`input ${object.name} {\n  ${fieldsOf(object, false).join("\n  ")}\n}`);
  }
  return blocks.join("\n\n");
}

/** `Maybe<Array<Scalars["String"]>>` → `[String!]`, `Issue` → `Issue!`. */
function graphqlType(node: ts.TypeNode, source: ts.SourceFile): string {
  if (ts.isTypeReferenceNode(node)) {
    const name = node.typeName.getText(source);
    const argument = node.typeArguments?.[0];
    if ((name === "Maybe" || name === "InputMaybe") && argument) {
      return graphqlType(argument, source).replace(/!$/, "");
    }
    if (name === "Array" && argument) return `[${graphqlType(argument, source)}]!`;
    return `${name}!`;
  }
  if (ts.isIndexedAccessTypeNode(node) && ts.isLiteralTypeNode(node.indexType)) {
    const literal = node.indexType.literal;
    if (ts.isStringLiteral(literal)) return `${literal.text}!`;
  }
  if (ts.isArrayTypeNode(node)) return `[${graphqlType(node.elementType, source)}]!`;
  throw new Error(`unexpected type in @linear/sdk's schema declarations: ${node.getText(source)}`);
}
