import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

/**
 * Renders only the rows in view (plus a margin) of a fixed-row-height list inside its own
 * scroll box, so 10,000 rows cost as much as 30.
 */
export function VirtualList<T>({
  items,
  rowHeight,
  height,
  render,
  label,
}: {
  items: readonly T[];
  rowHeight: number;
  height: string;
  render: (item: T, index: number) => ComponentChildren;
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewport, setViewport] = useState(800);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setViewport(el.clientHeight || 800);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const overscan = 8;
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(items.length, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);
  const rows = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <li key={i} class="vrow" style={{ top: `${i * rowHeight}px`, height: `${rowHeight}px` }}>
        {render(items[i] as T, i)}
      </li>,
    );
  }
  return (
    <div
      ref={box}
      class="vlist"
      style={{ height }}
      onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}
    >
      <ul aria-label={label} class="vlist-inner" style={{ height: `${items.length * rowHeight}px` }}>
        {rows}
      </ul>
    </div>
  );
}
