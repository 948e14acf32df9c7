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
  height?: number;
}

/** `--name` read from the page's styles, else `color` itself. */
export function colorOf(color: string): string {
  if (!color.startsWith('--')) return color;
  return getComputedStyle(document.documentElement).getPropertyValue(color).trim() || '#888';
}

/** Each series with the ones before it added in: the tops of areas stacked in order (null as 0). */
export function stacked(series: readonly ChartSeries[]): number[][] {
  const tops: number[][] = [];
  series.forEach((s, i) => tops.push(s.values.map((v, j) => (v ?? 0) + (i ? tops[i - 1]![j]! : 0))));
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
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
};

function optionsOf(p: ChartProps, width: number): uPlot.Options {
  const kind = p.kind ?? 'lines';
  const format = p.format ?? ((v: number) => String(Math.round(v * 100) / 100));
  const xLabel = p.xAs === 'times' ? timeLabel : dayLabel;
  const bars = kind === 'bars' ? uPlot.paths.bars!({ size: [0.6, 40] }) : undefined;
  // Stacked: the tops drawn from the highest down, each filled to the axis over the one before,
  // so each band shows one series; the legend says the series' own value, not its top.
  const order = kind === 'stacked' ? [...p.series].reverse() : p.series;
  return {
    width,
    height: p.height ?? 220,
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: false }, y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.08 : 1] } },
    axes: [
      { values: (_u, ticks) => ticks.map(xLabel), stroke: colorOf('--muted'), grid: { stroke: colorOf('--line') } },
      {
        label: p.yLabel,
        values: (_u, ticks) => ticks.map(format),
        stroke: colorOf('--muted'),
        grid: { stroke: colorOf('--line') },
        size: 56,
      },
    ],
    series: [
      { label: p.xAs === 'times' ? 'time' : 'day', value: (_u, v) => (v == null ? '—' : xLabel(v)) },
      ...order.map((s) => {
        const color = colorOf(s.color);
        return {
          label: s.label,
          stroke: color,
          width: kind === 'lines' ? 2 : 1,
          fill: kind === 'lines' ? undefined : color,
          points: { show: kind === 'lines' && p.x.length < 40 },
          spanGaps: false,
          value: (_u: uPlot, v: number | null, _si: number, i: number | null) => {
            const own = kind === 'stacked' && i !== null ? s.values[i] : v;
            return own == null ? '—' : format(own);
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
  const shape = `${p.kind}|${p.xAs}|${p.yLabel}|${p.series.map((s) => s.label + s.color).join(',')}`;
  useEffect(() => {
    const el = box.current!;
    const u = new uPlot(optionsOf(p, el.clientWidth || 600), dataOf(p), el);
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
