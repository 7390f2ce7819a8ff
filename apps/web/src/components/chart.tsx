import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
}

/**
 * A uPlot time-series chart that follows its container's width. The time axis always spans
 * `range` (the period the operator chose), never the data's own extent: with one point or
 * none, uPlot would otherwise pad a single x value into years. The applied x scale is written
 * to `data-x-min` / `data-x-max` (Unix seconds) for tests and tools.
 */
export function Chart({
  title,
  times,
  series,
  unit,
  range,
}: {
  title: string;
  /** Unix seconds. */
  times: number[];
  series: ChartSeries[];
  unit: string;
  /** The time axis' extent, Unix seconds. */
  range: readonly [number, number];
}) {
  const box = useRef<HTMLDivElement>(null);
  const [from, to] = range;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            // A single bucket has no neighbour to join: draw it as a dot.
            points: { show: times.length <= 1 ? true : undefined },
            value: (_u: uPlot, v: number | null) => (v === null ? "–" : `${round(v)} ${unit}`),
          })),
        ],
        axes: [{ stroke: "currentColor" }, { stroke: "currentColor", label: unit, size: 60 }],
        scales: {
          x: { time: true, auto: false, range: (): uPlot.Range.MinMax => [from, to] },
          y: { range: (_u, min, max) => valueRange(min, max) },
        },
        hooks: {
          setScale: [
            (u, key) => {
              if (key !== "x") return;
              el.dataset.xMin = String(u.scales.x?.min ?? "");
              el.dataset.xMax = String(u.scales.x?.max ?? "");
            },
          ],
        },
      },
      [times, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [times, series, unit, from, to]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${series.map((s) => s.label).join(", ")}`} />
    </figure>
  );
}

/** The value axis from 0 to a little above the largest value (0–1 with no value at all). */
function valueRange(min: number | null, max: number | null): uPlot.Range.MinMax {
  const hi = max === null || !Number.isFinite(max) ? 1 : Math.max(max, 0);
  const lo = min === null || !Number.isFinite(min) ? 0 : Math.min(min, 0);
  return [lo, hi === lo ? lo + 1 : hi * 1.1];
}

function round(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3);
}
