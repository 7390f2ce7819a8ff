import { PAGE_STYLE, renderPage, type StaticPage, TOKEN_FORM, TOKEN_SCRIPT } from "./page-shell.ts";

/**
 * The dashboard (`GET /`): projects with their counts, running runs and pending "Needs you"
 * cards with one button per option (plus a note), kept live by each project's SSE event
 * stream (a debounced status reload per event), with a slow periodic refresh as a fallback.
 */
const DASHBOARD_SCRIPT = `${TOKEN_SCRIPT}
const root = document.getElementById("projects");
const message = document.getElementById("message");
const sources = new Map();
const timers = new Map();

function say(text, kind) { message.textContent = text; message.className = kind || "muted"; }

function closeStreams() { for (const s of sources.values()) s.close(); sources.clear(); }

async function loadAll() {
  closeStreams();
  root.replaceChildren();
  if (!getToken()) { say("Enter a token (read scope to watch, operate scope to answer)."); return; }
  try {
    await loadWorkers();
    const { projects } = await api("GET", "/api/v1/projects");
    if (projects.length === 0) say("No project yet: create one with overseer init."); else say("");
    for (const p of projects) {
      const section = el("section", { class: "card", id: "project-" + p.id }, el("p", { class: "muted" }, "Loading " + p.id + "…"));
      root.append(section);
      await refresh(p.id);
      follow(p.id);
    }
  } catch (err) { say(err.message, "error"); }
}

// Workers, with a loud banner for any that runs agents without a sandbox (OVERSEER_SANDBOX=none).
async function loadWorkers() {
  const box = document.getElementById("workers");
  try {
    const { workers } = await api("GET", "/api/v1/workers");
    const unsafe = workers.filter((w) => w.unsafe);
    const summary = el("p", { class: "muted" }, workers.length + " worker(s): " + (workers.map((w) => w.id + " [" + w.sandbox + ", " + w.current_jobs.length + "/" + w.slots + " busy]").join(", ") || "none"));
    if (unsafe.length) box.replaceChildren(el("p", { class: "error unsafe" }, "UNSAFE: " + unsafe.map((w) => w.id).join(", ") + " run agents WITHOUT a sandbox (OVERSEER_SANDBOX=none)."), summary);
    else box.replaceChildren(summary);
  } catch (err) { box.replaceChildren(el("p", { class: "error" }, "workers: " + err.message)); }
}

function follow(projectId) {
  const url = "/api/projects/" + encodeURIComponent(projectId) + "/events/stream?access_token=" + encodeURIComponent(getToken());
  const source = new EventSource(url);
  source.onmessage = () => schedule(projectId);
  sources.set(projectId, source);
}

function schedule(projectId) {
  clearTimeout(timers.get(projectId));
  timers.set(projectId, setTimeout(() => refresh(projectId), 250));
}

async function refresh(projectId) {
  const section = document.getElementById("project-" + projectId);
  if (!section) return;
  try {
    const s = await api("GET", "/api/projects/" + encodeURIComponent(projectId) + "/status");
    section.replaceChildren(renderStatus(s));
  } catch (err) { section.replaceChildren(el("p", { class: "error" }, projectId + ": " + err.message)); }
}

function renderStatus(s) {
  const counts = Object.entries(s.counts).filter(([k, v]) => k !== "total" && v > 0).map(([k, v]) => el("span", { class: "pill" }, v + " " + k));
  const running = s.running.length === 0 ? el("p", { class: "muted" }, "No run in progress.") :
    el("table", {}, el("tr", {}, el("th", {}, "Task"), el("th", {}, "Action"), el("th", {}, "Agent"), el("th", {}, "Status"), el("th", {}, "Worker")),
      s.running.map((r) => el("tr", {}, el("td", {}, r.task_id), el("td", {}, r.action), el("td", {}, el("code", {}, r.agent_id)), el("td", {}, r.status), el("td", {}, r.worker_id || "–"))));
  return el("div", {},
    el("h2", {}, s.name + " ", el("span", { class: "pill " + s.status }, s.status), s.stage ? el("span", { class: "pill" }, "stage " + s.stage) : null),
    s.status_reason ? el("p", { class: "muted" }, s.status_reason) : null,
    s.objective ? el("p", {}, s.objective) : null,
    el("div", {}, counts.length ? counts : el("span", { class: "muted" }, "No task."), el("span", { class: "muted" }, " (" + s.counts.total + " total)")),
    el("h3", {}, "Running"), running,
    el("h3", {}, s.waiting_for_you ? "Needs you — " + s.waiting_for_you : "Needs you"),
    s.pending_questions.length === 0 ? el("p", { class: "muted" }, "No unanswered question.") : s.pending_questions.map((q) => renderCard(s.project_id, q)));
}

function renderCard(projectId, q) {
  const note = el("textarea", { placeholder: "Note (required for options marked *)" });
  const result = el("p", { class: "muted" });
  const buttons = q.options.map((o) => el("button", {
    type: "button", title: o.description || o.label, class: o.id === "stop" ? "" : "primary",
    onclick: async (event) => {
      if (o.requires_note && !note.value.trim()) { result.textContent = "Option " + o.id + " needs a note."; result.className = "error"; return; }
      for (const b of buttons) b.disabled = true;
      try {
        const r = await api("POST", "/api/projects/" + encodeURIComponent(projectId) + "/decisions/" + encodeURIComponent(q.id) + "/resolve", { option_id: o.id, note: note.value.trim() || null });
        result.textContent = "Resolved (" + r.application_status + ", resolution " + r.resolution_id + ")."; result.className = "ok";
        schedule(projectId);
      } catch (err) { result.textContent = err.message; result.className = "error"; for (const b of buttons) b.disabled = false; }
    } }, o.label + (o.requires_note ? " *" : "")));
  return el("div", { class: "needs" },
    el("h4", {}, q.title),
    el("div", { class: "muted" }, q.item_id + " · " + q.id + " · revision " + q.revision),
    q.reason && q.reason !== q.question ? el("p", {}, q.reason) : null,
    el("p", {}, el("strong", {}, q.question)),
    q.evidence.length ? el("ul", {}, q.evidence.map((e) => el("li", {}, e.label + " ", el("code", {}, e.path), " — " + e.summary))) : null,
    el("div", { class: "options" }, buttons), note, result);
}

bindTokenForm(loadAll);
loadAll();
setInterval(() => { for (const id of sources.keys()) schedule(id); loadWorkers(); }, 30000);
`;

const DASHBOARD_BODY = `
<header><h1>Overseer</h1><a href="/docs">API docs</a><span class="spacer"></span>${TOKEN_FORM}</header>
<main>
<p id="message" class="muted"></p>
<div id="workers"></div>
<div id="projects"></div>
</main>`;

export const DASHBOARD_PAGE: StaticPage = renderPage({
  title: "Overseer",
  style: PAGE_STYLE,
  script: DASHBOARD_SCRIPT,
  body: DASHBOARD_BODY,
});
