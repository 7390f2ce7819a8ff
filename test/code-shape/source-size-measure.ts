import ts from "typescript";

/**
 * Measures the two sizes the size check (source-size.test.ts) limits: lines per file, and the
 * own lines of each function.
 *
 * A function's own lines are the lines of its span less the inner lines of what it merely
 * contains: nested functions (each is measured on its own, so a test's `describe` callback is
 * not the sum of its `it` callbacks) and object/array literals (declarations: route
 * definitions, schemas, lookup tables). The first and last line of each such region stay the
 * function's own. Comments and blank lines inside the function count: they are read too.
 */

export interface FunctionSize {
  /** A readable name: `Class.method`, `name`, or `<kind> at line N` for anonymous functions. */
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

export function fileLineCount(text: string): number {
  return text.length === 0 ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

type FunctionNode = ts.FunctionLikeDeclaration;

const isFunction = (node: ts.Node): node is FunctionNode =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node);

const isDeclarationTable = (node: ts.Node): boolean =>
  ts.isObjectLiteralExpression(node) || ts.isArrayLiteralExpression(node);

/** Every function in `text` with its own line count, in source order. */
export function functionSizes(fileName: string, text: string): FunctionSize[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const sizes: FunctionSize[] = [];

  /** Lines strictly inside the regions under `fn` that are not its own. */
  const containedLines = (fn: FunctionNode): number => {
    let lines = 0;
    fn.forEachChild(function visit(child) {
      if (isFunction(child) || isDeclarationTable(child)) {
        lines += Math.max(0, lineOf(child.getEnd()) - lineOf(child.getStart(source)) - 1);
        return;
      }
      child.forEachChild(visit);
    });
    return lines;
  };

  const visit = (node: ts.Node): void => {
    if (isFunction(node) && node.body) {
      const first = lineOf(node.getStart(source));
      const span = lineOf(node.getEnd()) - first + 1;
      sizes.push({ name: nameOf(node, first + 1), line: first + 1, lines: span - containedLines(node) });
    }
    node.forEachChild(visit);
  };
  visit(source);
  return sizes;
}

function nameOf(node: FunctionNode, line: number): string {
  const own = node.name && !ts.isComputedPropertyName(node.name) ? node.name.getText() : undefined;
  const owner =
    ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isAccessor(node)
      ? ts.isClassLike(node.parent) && node.parent.name
        ? `${node.parent.name.text}.`
        : ""
      : "";
  if (ts.isConstructorDeclaration(node)) return `${owner}constructor`;
  if (own) return `${owner}${own}`;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  if (ts.isCallExpression(parent)) {
    // A callback: `describe("name") callback`, `app.get("/path") callback`.
    const label = parent.arguments[0];
    const what = label && ts.isStringLiteralLike(label) ? JSON.stringify(label.text) : "";
    return `${parent.expression.getText()}(${what}) callback`;
  }
  return `anonymous function at line ${line}`;
}
