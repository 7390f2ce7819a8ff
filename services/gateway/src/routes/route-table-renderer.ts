/** The parts of an OpenAPI document the route table shows. */
interface RouteTableDocument {
  readonly paths?: Record<string, Record<string, { tags?: readonly string[]; summary?: string }>>;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/**
 * The route table of the READMEs, from the OpenAPI document (`/openapi.json`): one row per
 * operation, grouped by the operation's first tag in order of first appearance, each group in
 * the document's order. `services/gateway/README.md` and `docs/http-api.md` hold it between
 * `<!-- routes:begin -->` and `<!-- routes:end -->`; a test compares them with this output.
 */
export function renderRouteTableMarkdown(document: RouteTableDocument): string {
  const groups = new Map<string, string[]>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const tag = operation.tags?.[0] ?? "Other";
      const rows = groups.get(tag) ?? [];
      rows.push(`| ${tag} | \`${method.toUpperCase()} ${path}\` | ${escapeCell(operation.summary ?? "")} |`);
      groups.set(tag, rows);
    }
  }
  return `${["| Family | Route | What it does |", "| --- | --- | --- |", ...[...groups.values()].flat()].join("\n")}\n`;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}
