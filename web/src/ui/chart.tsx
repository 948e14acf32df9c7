// One chart over time, drawn by uPlot on a canvas: lines, bars, or areas stacked in order (a
// cumulative flow diagram). Import it only from pages that load lazily: uPlot (about 50 KB) stays
// out of the first load. Colours are CSS custom properties, so a chart uses the columns' own.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  /** A CSS custom property (`--state-ready`) or a colour. */
  color: string;
  /** One value per point of `x`; null where there is none. */
  values: readonly (number | null)[];
}

export interface ChartProps {
  /** The chart's name, its heading and its accessible label. */
  title: string;
  /** Seconds since the epoch, ascending. */
  x: readonly number[];
  series: readonly ChartSeries[];
  /** The y axis's label, unit included ("items", "ms", "MB"). */
  yLabel: string;
  kind?: 'lines' | 'bars' | 'stacked';
  /** Days on the x axis ("Nov 28") or times of day ("14:05"). */
  xAs?: 'days' | 'times';
  /** Numbers shown on the axis and in the legend, in the y unit. */
  format?: (v: number) => string;
  /** A fixed y range (a rate's 0 to 100 %); else from 0 (or the least value) to above the greatest. */
  yRange?: readonly [number, number];
  height?: number;
}

/** `--name` read from the page's styles, else `color` itself. */
export function colorOf(color: string): string {
  if (!color.startsWith('--')) return color;
  return getComputedStyle(document.documentElement).getPropertyValue(color).trim() || '#888';
}

/**
 * Each series with the ones before it added in: the tops of areas stacked in order (null counts as
 * 0 over a value below it; a point where this series and all below it are null stays a gap).
 */
export function stacked(series: readonly ChartSeries[]): (number | null)[][] {
  const tops: (number | null)[][] = [];
  series.forEach((s, i) =>
    tops.push(
      s.values.map((v, j) => {
        const below = i ? tops[i - 1]![j]! : null;
        return v == null && below == null ? null : (v ?? 0) + (below ?? 0);
      }),
    ),
  );
  return tops;
}

const pad2 = (n: number) => String(n).padStart(2, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const dayLabel = (s: number) => {
  const d = new Date(s * 1000);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
};
const timeLabel = (s: number) => {
  const d = new Date(s * 1000);
  return `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
};
const DAY = 86_400;
/** Ticks at whole days (UTC midnights) or whole minutes and hours, never between them. */
const DAY_STEPS = [1, 2, 7, 14, 28, 56, 91, 182].map((n) => n * DAY);
const TIME_STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, DAY];

/** The options for `p`; `latest` gives the props of the newest render (the data moves on without new options). */
function optionsOf(p: ChartProps, width: number, latest: () => ChartProps): uPlot.Options {
  const kind = p.kind ?? 'lines';
  const format = p.format ?? ((v: number) => String(Math.round(v * 100) / 100));
  const xLabel = p.xAs === 'times' ? timeLabel : dayLabel;
  // One point makes no area: a stack of one day is drawn as a stacked bar instead.
  const barred = kind === 'bars' || (kind === 'stacked' && p.x.length < 2);
  const bars = barred ? uPlot.paths.bars!({ size: [0.6, 48] }) : undefined;
  // Half a step either side, so the first and last bars (or a lone point) are drawn whole.
  const step = p.xAs === 'times' ? 60 : DAY;
  const pad = barred || p.x.length < 2 ? step / 2 : 0;
  // Stacked: the tops drawn from the highest down, each filled to the axis over the one before,
  // so each band shows one series; the legend says the series' own value, not its top.
  const order = kind === 'stacked' ? [...p.series].reverse() : p.series;
  return {
    width,
    height: p.height ?? 220,
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    scales: {
      x: { time: false, range: (_u, min, max) => [min - pad, max + pad] },
      y: {
        range: (_u, min, max) =>
          p.yRange ? [p.yRange[0], p.yRange[1]] : [Math.min(0, min ?? 0), (max ?? 0) > 0 ? max * 1.08 : 1],
      },
    },
    axes: [
      {
        values: (_u, ticks) => ticks.map(xLabel),
        incrs: p.xAs === 'times' ? TIME_STEPS : DAY_STEPS,
        stroke: colorOf('--muted'),
        grid: { stroke: colorOf('--line') },
      },
      {
        label: p.yLabel,
        values: (_u, ticks) => ticks.map(format),
        stroke: colorOf('--muted'),
        grid: { stroke: colorOf('--line') },
        size: 56,
      },
    ],
    series: [
      {
        label: p.xAs === 'times' ? 'time (UTC)' : 'day (UTC)',
        value: (_u, v, _si, i) => {
          const x = i === null ? latest().x.at(-1) : v;
          return x == null ? '—' : xLabel(x);
        },
      },
      ...order.map((s, k) => {
        const color = colorOf(s.color);
        const own = kind === 'stacked' ? p.series.length - 1 - k : k;
        return {
          label: s.label,
          stroke: color,
          width: kind === 'lines' ? 2 : 1,
          fill: kind === 'lines' ? undefined : color,
          // Few points are marked, filled (a lone one is all there is to see).
          points: { show: kind === 'lines' && p.x.length < 40, size: 7, fill: color },
          spanGaps: false,
          // At rest (no cursor) the legend says the last point's values; stacked, each its own.
          value: (_u: uPlot, v: number | null, _si: number, i: number | null) => {
            const at = i ?? latest().x.length - 1;
            const shown = kind === 'stacked' || i === null ? latest().series[own]?.values[at] : v;
            return shown == null ? '—' : format(shown);
          },
          ...(bars && { paths: bars }),
        };
      }),
    ],
  };
}

function dataOf(p: ChartProps): uPlot.AlignedData {
  const values =
    p.kind === 'stacked' ? stacked(p.series).reverse() : p.series.map((s) => s.values.map((v) => v ?? null));
  return [p.x as number[], ...(values as (number | null)[][])];
}

/** A chart that redraws when its data changes and follows its box's width. */
export function Chart(p: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(p);
  latest.current = p;
  // What the options are made of (a lone point is drawn apart): a change makes the plot anew.
  const shape = `${p.kind}|${p.xAs}|${p.yLabel}|${p.yRange}|${p.x.length < 2}|${p.series.map((s) => s.label + s.color).join(',')}`;
  useEffect(() => {
    const el = box.current!;
    const u = new uPlot(
      optionsOf(p, el.clientWidth || 600, () => latest.current),
      dataOf(p),
      el,
    );
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: el.clientWidth, height: p.height ?? 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape]);
  useEffect(() => {
    plot.current?.setData(dataOf(p));
  }, [p.x, p.series]);
  return (
    <figure class="chart" aria-label={p.title}>
      <figcaption>{p.title}</figcaption>
      <div ref={box} class="chart-plot" />
    </figure>
  );
}
