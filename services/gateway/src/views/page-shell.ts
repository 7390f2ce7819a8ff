import { createHash } from "node:crypto";

/**
 * Self-contained HTML pages (no external asset, no CDN: the gateway may run air-gapped).
 * The inline script and style are allowed by their SHA-256 in the Content-Security-Policy,
 * so nothing else can run in the page even if a value slipped into the DOM; the scripts build
 * the DOM with `textContent` only. The token the operator types is kept in sessionStorage
 * (gone when the tab closes) and sent as a bearer header; only EventSource, which cannot set
 * headers, passes it as `access_token`.
 */
export interface StaticPage {
  readonly html: string;
  readonly contentSecurityPolicy: string;
}

export function renderPage(input: {
  title: string;
  style: string;
  script: string;
  body: string;
}): StaticPage {
  const hash = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${input.title}</title>
<style>${input.style}</style>
</head>
<body>
${input.body}
<script>${input.script}</script>
</body>
</html>
`;
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src ${hash(input.script)}`,
    `style-src ${hash(input.style)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html, contentSecurityPolicy };
}

/** Shared look of the dashboard and the API docs page. */
export const PAGE_STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5d6675; --bg: #f6f7f9; --card: #fff; --line: #d9dde4; --accent: #2f5fd0; --warn: #b4540a; --bad: #b42318; --ok: #1a7f37; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8ec; --muted: #9aa3b2; --bg: #14171c; --card: #1c2027; --line: #2c323c; --accent: #7aa2ff; --warn: #f0a35c; --bad: #ff7b72; --ok: #56d364; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 12px; align-items: center; padding: 10px 18px; border-bottom: 1px solid var(--line); background: var(--card); position: sticky; top: 0; }
header h1 { font-size: 16px; margin: 0 12px 0 0; }
header .spacer { flex: 1; }
main { padding: 16px 18px; max-width: 1200px; margin: 0 auto; }
input, textarea, button, select { font: inherit; color: inherit; }
input[type=password], input[type=text], textarea { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 5px 8px; }
textarea { width: 100%; min-height: 46px; }
button { border: 1px solid var(--line); background: var(--card); border-radius: 6px; padding: 4px 10px; cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button:disabled { opacity: .5; cursor: default; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; margin-bottom: 14px; }
.muted { color: var(--muted); }
.pill { display: inline-block; border: 1px solid var(--line); border-radius: 999px; padding: 1px 8px; margin: 0 4px 4px 0; font-size: 12px; }
.pill.active { color: var(--ok); border-color: var(--ok); } .pill.paused { color: var(--warn); border-color: var(--warn); } .pill.stopped { color: var(--bad); border-color: var(--bad); }
.needs { border-left: 4px solid var(--warn); padding: 8px 12px; margin: 10px 0; background: var(--bg); border-radius: 6px; }
.needs h4 { margin: 0 0 4px; }
.options { display: flex; flex-wrap: wrap; gap: 6px; margin: 6px 0; }
.error { color: var(--bad); } .ok { color: var(--ok); }
table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--line); vertical-align: top; }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; overflow: auto; max-height: 420px; }
.method { display: inline-block; min-width: 58px; font-weight: 600; text-transform: uppercase; }
.get { color: var(--ok); } .post { color: var(--accent); } .delete { color: var(--bad); }
details > summary { cursor: pointer; padding: 4px 0; }
`;

/** Token handling shared by both pages (sessionStorage key `overseer.token`). */
export const TOKEN_SCRIPT = `
const TOKEN_KEY = "overseer.token";
function getToken() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
function setToken(value) { if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY); }
async function api(method, path, body) {
  const headers = { "Authorization": "Bearer " + getToken(), "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    const message = data && data.error ? data.error.message : ("HTTP " + res.status);
    const err = new Error(message); err.status = res.status; err.body = data; throw err;
  }
  return data;
}
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v); else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children.flat()) { if (child === null || child === undefined || child === false) continue; node.append(child instanceof Node ? child : document.createTextNode(String(child))); }
  return node;
}
function bindTokenForm(onChange) {
  const input = document.getElementById("token");
  const save = document.getElementById("save-token");
  const forget = document.getElementById("forget-token");
  input.value = getToken() ? "••••••••" : "";
  save.addEventListener("click", () => { if (input.value && !input.value.startsWith("••")) { setToken(input.value.trim()); input.value = "••••••••"; onChange(); } });
  forget.addEventListener("click", () => { setToken(""); input.value = ""; onChange(); });
}
`;

export const TOKEN_FORM = `
<label class="muted" for="token">Token</label>
<input id="token" type="password" autocomplete="off" placeholder="ovr_…" size="28">
<button id="save-token" class="primary" type="button">Use token</button>
<button id="forget-token" type="button">Forget</button>`;
