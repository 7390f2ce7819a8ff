import { useEffect, useMemo, useRef, useState } from "preact/hooks";

/** A run's raw output as it streams: auto-scroll (stops when you scroll up) and a line filter. */
export function LogBox({ log, state }: { log: string; state: string }) {
  const [search, setSearch] = useState("");
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLPreElement>(null);
  const lines = useMemo(() => {
    const all = log.split("\n");
    if (!search) return all;
    const needle = search.toLowerCase();
    return all.filter((l) => l.toLowerCase().includes(needle));
  }, [log, search]);
  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);
  return (
    <section aria-labelledby="log-title" class="log-section">
      <div class="toolbar">
        <h2 id="log-title">Log</h2>
        <span class="live" role="status" data-testid="log-state">
          {state}
        </span>
        <label>
          Search{" "}
          <input
            type="search"
            value={search}
            onInput={(e) => setSearch((e.currentTarget as HTMLInputElement).value)}
            data-testid="log-search"
          />
        </label>
        <label>
          <input
            type="checkbox"
            checked={follow}
            onChange={(e) => setFollow((e.currentTarget as HTMLInputElement).checked)}
          />{" "}
          Auto-scroll
        </label>
        {search ? <span class="muted">{lines.length} matching line(s)</span> : null}
      </div>
      <pre
        ref={box}
        class="log"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
        tabIndex={0}
        title="Run output"
        data-testid="run-log"
        onScroll={(e) => {
          const el = e.currentTarget as HTMLPreElement;
          const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
          if (!atBottom && follow) setFollow(false);
        }}
      >
        {log === ""
          ? state === "live" || state === "connecting"
            ? "Waiting for output…"
            : "No output."
          : lines.join("\n")}
      </pre>
    </section>
  );
}
