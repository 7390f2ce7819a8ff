import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
}

/** A uPlot time-series chart that follows its container's width. */
export function Chart({
  title,
  times,
  series,
  unit,
}: {
  title: string;
  /** Unix seconds. */
  times: number[];
  series: ChartSeries[];
  unit: string;
}) {
  const box = useRef<HTMLDivElement>(null);
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
            value: (_u: uPlot, v: number | null) => (v === null ? "–" : `${round(v)} ${unit}`),
          })),
        ],
        axes: [{ stroke: "currentColor" }, { stroke: "currentColor", label: unit, size: 60 }],
        scales: { x: { time: true } },
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
  }, [times, series, unit]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${series.map((s) => s.label).join(", ")}`} />
    </figure>
  );
}

function round(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3);
}
