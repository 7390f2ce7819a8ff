import type { Task } from "../api/types.ts";
import { href } from "../lib/router.ts";

/**
 * Prerequisites as a layered graph: each task sits one column right of its deepest
 * prerequisite; edges go from prerequisite to dependant. Bounded to `max` tasks.
 */
export function PrereqGraph({
  tasks,
  projectId,
  max = 150,
}: {
  tasks: Task[];
  projectId: string;
  max?: number;
}) {
  const shown = tasks.slice(0, max);
  const byId = new Map(shown.map((t) => [t.id, t]));
  const layer = new Map<string, number>();
  const depth = (id: string, seen: Set<string>): number => {
    const known = layer.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 0;
    seen.add(id);
    const t = byId.get(id);
    const d = t
      ? Math.max(-1, ...t.prerequisites.filter((p) => byId.has(p)).map((p) => depth(p, seen))) + 1
      : 0;
    layer.set(id, d);
    return d;
  };
  for (const t of shown) depth(t.id, new Set());
  const columns: Task[][] = [];
  for (const t of shown) {
    const d = layer.get(t.id) ?? 0;
    const column = columns[d] ?? [];
    column.push(t);
    columns[d] = column;
  }
  const colW = 170;
  const rowH = 34;
  const pos = new Map<string, { x: number; y: number }>();
  for (const [ci, col] of columns.entries()) {
    for (const [ri, t] of (col ?? []).entries()) pos.set(t.id, { x: 8 + ci * colW, y: 8 + ri * rowH });
  }
  const width = Math.max(200, columns.length * colW + 16);
  const height = Math.max(60, Math.max(0, ...columns.map((c) => c.length)) * rowH + 16);
  const edges = shown.flatMap((t) =>
    t.prerequisites
      .filter((p) => pos.has(p))
      .map((p) => ({
        from: pos.get(p) as { x: number; y: number },
        to: pos.get(t.id) as { x: number; y: number },
        key: `${p}->${t.id}`,
      })),
  );
  if (shown.length === 0) return <p class="muted">No task in this stage.</p>;
  return (
    <div class="graph-box">
      {tasks.length > max ? (
        <p class="muted">
          Showing the first {max} of {tasks.length} tasks; pick a stage to narrow it.
        </p>
      ) : null}
      <svg width={width} height={height} role="img" aria-label={`Prerequisites of ${shown.length} tasks`}>
        {edges.map((e) => (
          <path
            key={e.key}
            class="edge"
            d={`M${e.from.x + 140},${e.from.y + 12} C${e.from.x + 155},${e.from.y + 12} ${e.to.x - 15},${e.to.y + 12} ${e.to.x},${e.to.y + 12}`}
          />
        ))}
        {shown.map((t) => {
          const p = pos.get(t.id) as { x: number; y: number };
          return (
            <a key={t.id} href={href.task(projectId, t.id)}>
              <rect x={p.x} y={p.y} width={140} height={24} rx={5} class={`node s-${t.status}`} />
              <text x={p.x + 6} y={p.y + 16} class="node-label">
                {t.id.length > 20 ? `${t.id.slice(0, 19)}…` : t.id}
              </text>
              <title>{`${t.id}: ${t.title} (${t.status})`}</title>
            </a>
          );
        })}
      </svg>
    </div>
  );
}
