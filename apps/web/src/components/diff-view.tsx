import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { CommitDiff } from "../api/types.ts";

/**
 * A commit's patch with line-level colouring (added, removed, hunk, file header) and token
 * highlighting inside code lines (strings, comments, numbers, keywords of C-like, shell and
 * Python sources), rendered as text nodes only: nothing from the patch becomes markup.
 */
const KEYWORDS = new Set(
  "async await break case catch class const continue def default do elif else enum export extends false fi for from func function if import in interface let match new nil none null package pass private public raise return self static struct switch then this throw true try type undefined var while with yield".split(
    " ",
  ),
);
const TOKEN =
  /(\/\/.*$|#.*$|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`|\b\d+(?:\.\d+)?\b|\b[A-Za-z_][A-Za-z0-9_]*\b)/g;

export function highlightCode(code: string): (string | JSX.Element)[] {
  const out: (string | JSX.Element)[] = [];
  let last = 0;
  let i = 0;
  for (const m of code.matchAll(TOKEN)) {
    const text = m[0];
    const at = m.index ?? 0;
    if (at > last) out.push(code.slice(last, at));
    let cls: string | null = null;
    if (text.startsWith("//") || text.startsWith("#")) cls = "tk-comment";
    else if (/^["'`]/.test(text)) cls = "tk-string";
    else if (/^\d/.test(text)) cls = "tk-number";
    else if (KEYWORDS.has(text)) cls = "tk-keyword";
    out.push(
      cls ? (
        <span key={i++} class={cls}>
          {text}
        </span>
      ) : (
        text
      ),
    );
    last = at + text.length;
  }
  if (last < code.length) out.push(code.slice(last));
  return out;
}

export function DiffLines({ patch }: { patch: string }) {
  const lines = patch.split("\n");
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <pre class="diff" tabIndex={0} title="Commit diff">
      {lines.map((line, i) => {
        const kind = line.startsWith("diff --git")
          ? "d-file"
          : line.startsWith("@@")
            ? "d-hunk"
            : line.startsWith("+++") || line.startsWith("---")
              ? "d-meta"
              : line.startsWith("+")
                ? "d-add"
                : line.startsWith("-")
                  ? "d-del"
                  : "d-ctx";
        const body =
          kind === "d-add" || kind === "d-del" || kind === "d-ctx"
            ? [line.slice(0, 1), ...highlightCode(line.slice(1))]
            : [line];
        // A file's header carries its path, so a transcript's file edit can scroll to it.
        const file = kind === "d-file" ? / b\/(.+)$/.exec(line)?.[1] : undefined;
        return (
          <div key={i} class={`dl ${kind}`} data-file={file}>
            {body}
          </div>
        );
      })}
    </pre>
  );
}

/**
 * "Show diff" for a run's commit, loaded on demand. `focus` (a transcript's file edit) opens it
 * and scrolls to that file; the path may be absolute (the agent's checkout) or relative.
 */
export function CommitDiffToggle({
  runId,
  sha,
  focus = null,
}: {
  runId: string;
  sha: string;
  focus?: { path: string; n: number } | null;
}) {
  const [open, setOpen] = useState(false);
  const [diff, setDiff] = useState<CommitDiff | null>(null);
  const [error, setError] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const load = async () => {
    if (diff) return;
    try {
      setDiff(await client.diff(runId));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const toggle = async () => {
    const next = !open;
    setOpen(next);
    if (next) await load();
  };
  // Once per click on a file edit (focus.n changes).
  useEffect(() => {
    if (!focus) return;
    setOpen(true);
    void load();
  }, [focus?.n]);
  useEffect(() => {
    if (!focus || !open || !diff?.available || !box.current) return;
    const file = diff.files.find((f) => focus.path === f.path || focus.path.endsWith(`/${f.path}`));
    const target = file
      ? [...box.current.querySelectorAll<HTMLElement>("[data-file]")].find(
          (el) => el.dataset.file === file.path,
        )
      : null;
    (target ?? box.current).scrollIntoView({ block: "start" });
    target?.classList.add("d-focus");
  }, [focus, open, diff]);
  return (
    <div class="diff-toggle" ref={box}>
      <button type="button" aria-expanded={open} onClick={toggle} data-testid={`diff-${sha.slice(0, 12)}`}>
        {open ? "Hide" : "Show"} diff of {sha.slice(0, 10)}
      </button>
      {open ? (
        error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : !diff ? (
          <p class="muted" role="status">
            Loading diff…
          </p>
        ) : !diff.available ? (
          <p class="muted">Diff unavailable: {diff.reason}</p>
        ) : (
          <div>
            <pre class="commit-message">{diff.message}</pre>
            <ul class="files">
              {diff.files.map((f) => (
                <li key={f.path}>
                  <code>{f.path}</code> <span class="add">+{f.additions}</span>{" "}
                  <span class="del">−{f.deletions}</span>
                  {f.binary ? " (binary)" : ""}
                </li>
              ))}
            </ul>
            <DiffLines patch={diff.patch} />
            {diff.truncated ? <p class="muted">The patch was cut; read the rest with git.</p> : null}
          </div>
        )
      ) : null}
    </div>
  );
}
