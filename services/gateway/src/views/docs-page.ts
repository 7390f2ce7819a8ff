import { PAGE_STYLE, renderPage, type StaticPage, TOKEN_FORM, TOKEN_SCRIPT } from "./page-shell.ts";

/**
 * `GET /docs`: a browsable rendering of `/openapi.json` without any external asset: one
 * section per tag, one collapsible entry per operation with its parameters, request body,
 * responses and the referenced schemas. The document itself needs a read token.
 */
const DOCS_SCRIPT = `${TOKEN_SCRIPT}
const root = document.getElementById("doc");
const message = document.getElementById("message");

function schemaText(schema, components, depth) {
  const seen = new Set();
  function resolve(s, d) {
    if (!s || typeof s !== "object") return s;
    if (s.$ref) {
      const name = s.$ref.split("/").pop();
      if (seen.has(name) || d > 4) return "<" + name + ">";
      seen.add(name);
      const out = resolve((components.schemas || {})[name], d + 1);
      seen.delete(name);
      return out;
    }
    if (Array.isArray(s)) return s.map((x) => resolve(x, d + 1));
    const out = {};
    for (const [k, v] of Object.entries(s)) out[k] = (typeof v === "object" && v !== null) ? resolve(v, d + 1) : v;
    return out;
  }
  return JSON.stringify(resolve(schema, depth || 0), null, 2);
}

function render(doc) {
  const components = doc.components || {};
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths || {})) {
    for (const [method, op] of Object.entries(item)) {
      const tag = (op.tags && op.tags[0]) || "Other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push({ path, method, op });
    }
  }
  const parts = [el("h1", {}, doc.info.title + " ", el("span", { class: "muted" }, doc.info.version)), el("p", {}, doc.info.description || "")];
  for (const [tag, ops] of byTag) {
    const section = el("section", { class: "card" }, el("h2", {}, tag));
    for (const { path, method, op } of ops) {
      const params = (op.parameters || []).map((p) => el("tr", {}, el("td", {}, el("code", {}, p.name)), el("td", {}, p.in), el("td", {}, p.required ? "required" : "optional"), el("td", {}, (p.description || "") + (p.schema && p.schema.pattern ? " pattern " + p.schema.pattern : ""))));
      const body = op.requestBody ? Object.entries(op.requestBody.content || {}).map(([type, media]) => el("div", {}, el("p", {}, "Body ", el("code", {}, type), op.requestBody.required ? " (required)" : " (optional)"), el("pre", {}, schemaText(media.schema, components)))) : [];
      const responses = Object.entries(op.responses || {}).map(([status, r]) => el("details", {}, el("summary", {}, status + " — " + (r.description || "")),
        Object.entries(r.content || {}).map(([type, media]) => el("div", {}, el("code", {}, type), el("pre", {}, schemaText(media.schema, components))))));
      const open = op.security && op.security.length === 0 ? " (no token)" : "";
      section.append(el("details", {},
        el("summary", {}, el("span", { class: "method " + method }, method), " ", el("code", {}, path), " — " + (op.summary || "") + open),
        op.description ? el("p", {}, op.description) : null,
        params.length ? el("table", {}, el("tr", {}, el("th", {}, "Parameter"), el("th", {}, "In"), el("th", {}, ""), el("th", {}, "Description")), params) : null,
        body, el("h4", {}, "Responses"), responses));
    }
    parts.push(section);
  }
  root.replaceChildren(...parts);
}

async function load() {
  root.replaceChildren();
  if (!getToken()) { message.textContent = "Enter a token with read scope to load the API description."; return; }
  try { render(await api("GET", "/openapi.json")); message.textContent = ""; }
  catch (err) { message.textContent = err.message; message.className = "error"; }
}

bindTokenForm(load);
load();
`;

const DOCS_BODY = `
<header><h1>Overseer API</h1><a href="/">Dashboard</a> <a href="/openapi.json">openapi.json</a><span class="spacer"></span>${TOKEN_FORM}</header>
<main>
<p id="message" class="muted"></p>
<div id="doc"></div>
</main>`;

export const DOCS_PAGE: StaticPage = renderPage({
  title: "Overseer API",
  style: PAGE_STYLE,
  script: DOCS_SCRIPT,
  body: DOCS_BODY,
});
