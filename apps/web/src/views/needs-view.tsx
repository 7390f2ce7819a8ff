import { useState } from "preact/hooks";
import { client } from "../api/client.ts";
import type { PendingDecision } from "../api/types.ts";
import { Empty, Load } from "../components/states.tsx";
import { ago } from "../lib/format.ts";
import { useLoad, useSession } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";

/** Every pending decision across projects; a resolved card leaves at once, the rest stays live. */
export function NeedsView() {
  const decisions = useLoad(() => client.decisions(), "decisions", 3000);
  const [gone, setGone] = useState<Set<string>>(new Set());
  return (
    <section aria-labelledby="needs-title">
      <h1 id="needs-title">Needs you</h1>
      <Load state={decisions} what="pending decisions">
        {(data) => {
          const cards = data.decisions.filter((d) => !gone.has(`${d.project_id}/${d.id}`));
          return cards.length === 0 ? (
            <Empty>Nothing needs you: no decision is pending in any project.</Empty>
          ) : (
            <ul class="cards" aria-label={`${cards.length} pending decision(s)`}>
              {cards.map((d) => (
                <DecisionCardView
                  key={`${d.project_id}/${d.id}`}
                  d={d}
                  onResolved={() => {
                    setGone((g) => new Set(g).add(`${d.project_id}/${d.id}`));
                    decisions.reload();
                  }}
                />
              ))}
            </ul>
          );
        }}
      </Load>
    </section>
  );
}

function DecisionCardView({ d, onResolved }: { d: PendingDecision; onResolved: () => void }) {
  const session = useSession();
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const noteId = `note-${d.project_id}-${d.id}`;
  const resolve = async (optionId: string, requiresNote: boolean) => {
    if (requiresNote && !note.trim()) {
      setError(`Option ${optionId} needs a note: write it in the note field first.`);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await client.resolve(d.project_id, d.id, optionId, note.trim() || null);
      onResolved();
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  return (
    <li class="needs card" data-testid={`decision-${d.project_id}-${d.id}`}>
      <h2>{d.title}</h2>
      <p class="muted small">
        <a href={href.project(d.project_id)}>{d.project_id}</a> ·{" "}
        <a href={href.task(d.project_id, d.item_id)}>{d.item_id}</a> · revision {d.revision} ·{" "}
        {ago(d.created_at)}
      </p>
      {d.reason && d.reason !== d.question ? <p>{d.reason}</p> : null}
      <p>
        <strong>{d.question}</strong>
      </p>
      {d.evidence.length ? (
        <ul>
          {d.evidence.map((e, i) => (
            <li key={`${i}:${e.label}`}>
              {e.label} <code>{e.path}</code> — {e.summary}
            </li>
          ))}
        </ul>
      ) : null}
      {session?.can_operate ? (
        <>
          <label for={noteId}>Note</label>
          <textarea
            id={noteId}
            value={note}
            onInput={(e) => setNote((e.currentTarget as HTMLTextAreaElement).value)}
          />
          <fieldset class="options">
            <legend class="sr-only">Options</legend>
            {d.options.map((o) => (
              <button
                key={o.id}
                type="button"
                class={o.id === "stop" ? "danger" : "primary"}
                title={o.description || o.label}
                disabled={busy}
                onClick={() => resolve(o.id, o.requires_note)}
                data-testid={`option-${o.id}`}
              >
                {o.label}
                {o.requires_note ? " (needs a note)" : ""}
              </button>
            ))}
          </fieldset>
        </>
      ) : (
        <p class="muted">Answering needs a token with the operate scope.</p>
      )}
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </li>
  );
}
