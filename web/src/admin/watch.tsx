// Overview: each node's last hour and the last 14 days as charts; their numbers are one click away
// as tables. (Abuse and Audit are web/src/admin/abuse.tsx and audit.tsx.)
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import { Chart, type ChartSeries } from '../ui/chart.js';
import { ago, ErrorNote } from '../ui/kit.js';
import { cell, clock, Facts, useLoad, words } from './shared.js';

type Json = Record<string, unknown>;
const rowsOf = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

const withoutAlerts = ({ alerts: _alerts, ...rest }: Json): Json => rest;

/** Each `ms`, a new number: what a load keyed on it reads again. */
function useTick(ms: number): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), ms);
    return () => clearInterval(t);
  }, [ms]);
  return tick;
}

type NodeHistory = Reply<'/api/admin/utilization/history', 'get'>['nodes'][number];
type Samples = NodeHistory['samples'];

const round2 = (n: number) => Math.round(n * 100) / 100;
/** A count over a sample's interval, per second. */
const perSecond = (s: Samples, key: 'requests' | 'commits', i: number) =>
  round2(s[key][i]! / Math.max(1, (s.at[i]! - s.from[i]!) / 1000));

/** A node's columns, as charted and tabled: the same numbers in both (`--series-*` colours from admin.css). */
const NODE_COLUMNS = [
  {
    key: 'requestsPerSecond',
    label: 'requests/s',
    color: '--series-requests',
    of: (s: Samples, i: number) => perSecond(s, 'requests', i),
  },
  {
    key: 'commitsPerSecond',
    label: 'commits/s',
    color: '--series-commits',
    of: (s: Samples, i: number) => perSecond(s, 'commits', i),
  },
  {
    key: 'latencyP99Ms',
    label: 'latency p99 ms',
    color: '--series-latency',
    of: (s: Samples, i: number) => s.latencyP99Ms[i]!,
  },
  {
    key: 'loopP99Ms',
    label: 'loop delay p99 ms',
    color: '--series-loop',
    of: (s: Samples, i: number) => s.loopP99Ms[i]!,
  },
  {
    key: 'loopMaxMs',
    label: 'loop delay max ms',
    color: '--series-loop-max',
    of: (s: Samples, i: number) => s.loopMaxMs[i]!,
  },
  { key: 'rssMiB', label: 'RSS MiB', color: '--series-rss', of: (s: Samples, i: number) => s.rssMiB[i]! },
  { key: 'heapMiB', label: 'heap MiB', color: '--series-heap', of: (s: Samples, i: number) => s.heapMiB[i]! },
] as const;
type NodeColumn = (typeof NODE_COLUMNS)[number]['key'];

const NODE_CHARTS: { title: string; yLabel: string; columns: NodeColumn[] }[] = [
  { title: 'Requests per second', yLabel: 'requests/s', columns: ['requestsPerSecond'] },
  { title: 'Commits per second', yLabel: 'commits/s', columns: ['commitsPerSecond'] },
  { title: 'Request latency, p99', yLabel: 'ms', columns: ['latencyP99Ms'] },
  { title: 'Event-loop delay', yLabel: 'ms', columns: ['loopP99Ms', 'loopMaxMs'] },
  { title: 'Memory', yLabel: 'MiB', columns: ['rssMiB', 'heapMiB'] },
];

/** A node's samples as chart points: seconds on x, and a point of nulls in each gap so no line crosses it. */
function pointsOf(s: Samples): { x: number[]; values: Record<NodeColumn, (number | null)[]> } {
  const x: number[] = [];
  const values = Object.fromEntries(NODE_COLUMNS.map((c) => [c.key, [] as (number | null)[]])) as Record<
    NodeColumn,
    (number | null)[]
  >;
  s.at.forEach((at, i) => {
    if (i > 0 && s.from[i]! > s.at[i - 1]!) {
      x.push((s.at[i - 1]! + s.from[i]!) / 2000);
      for (const c of NODE_COLUMNS) values[c.key].push(null);
    }
    x.push(at / 1000);
    for (const c of NODE_COLUMNS) values[c.key].push(c.of(s, i));
  });
  // A node's first minutes on at least two minutes of axis: the time ticks fall on whole minutes.
  if (x.length && x.at(-1)! - x[0]! < MIN_SPAN_S) {
    x.unshift(x.at(-1)! - MIN_SPAN_S);
    for (const c of NODE_COLUMNS) values[c.key].unshift(null);
  }
  return { x, values };
}

const MIN_SPAN_S = 120;

/** How long `ms` is, in the unit that reads best. */
const span = (ms: number) => (ms < 90_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`);

/** A time of day in UTC, as every time in the console. */
const hhmmss = (ms: number) => clock(ms).slice(0, 8);

function NodeCharts({ node, everyMs }: { node: NodeHistory; everyMs: number }) {
  const { x, values } = useMemo(() => pointsOf(node.samples), [node.samples]);
  const [table, setTable] = useState(false);
  const s = node.samples;
  const held = s.at.length;
  const covered = held ? s.at[held - 1]! - s.from[0]! : 0;
  return (
    <div class="node" data-node={node.nodeId} data-self={node.self ? '' : undefined}>
      <h3>
        {node.nodeId} {node.self ? '(this node)' : ''}
      </h3>
      <p class="muted small">
        {held
          ? `${held} samples, one every ${everyMs / 1000} s, over ${span(covered)}`
          : `No sample yet: the first comes ${everyMs / 1000} s after the node starts.`}
        {node.self ? '' : ` · heard ${ago(node.heardAt)}`}
        {node.gaps.length
          ? ` · ${node.gaps.length} gap${node.gaps.length > 1 ? 's' : ''} no node could fill: ${node.gaps
              .map((g) => `${hhmmss(g.from)}–${hhmmss(g.to)}`)
              .join(', ')} UTC`
          : ''}
      </p>
      {held ? (
        <div class="node-charts">
          {NODE_CHARTS.map((c) => (
            <Chart
              key={c.title}
              title={c.title}
              x={x}
              xAs="times"
              yLabel={c.yLabel}
              height={170}
              series={c.columns.map((k): ChartSeries => {
                const col = NODE_COLUMNS.find((n) => n.key === k)!;
                return { label: col.label, color: col.color, values: values[k] };
              })}
            />
          ))}
        </div>
      ) : null}
      <details class="as-table" onToggle={(e) => setTable((e.target as HTMLDetailsElement).open)}>
        <summary>Samples as a table</summary>
        {table ? <SamplesTable samples={s} /> : null}
      </details>
    </div>
  );
}

/** Newest first, a column per charted series under the series' own colour. */
function SamplesTable({ samples: s }: { samples: Samples }) {
  const order = s.at.map((_, i) => s.at.length - 1 - i);
  return (
    <div class="scroll-x samples">
      <table class="list dense series-table">
        <thead>
          <tr>
            <th>time (UTC)</th>
            {NODE_COLUMNS.map((c) => (
              <th key={c.key} class="num" data-column={c.key} style={{ '--series': `var(${c.color})` }}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {order.map((i) => (
            <tr key={s.at[i]} data-at={s.at[i]}>
              <td>{hhmmss(s.at[i]!)}</td>
              {NODE_COLUMNS.map((c) => (
                <td key={c.key} class="num" data-column={c.key}>
                  {cell(c.of(s, i))}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The per-day figures drawn as bars, each under its own colour. */
const DAY_CHARTS: { key: string; title: string; yLabel: string; color: string }[] = [
  { key: 'requests', title: 'Requests', yLabel: 'requests', color: '--series-requests' },
  { key: 'refusals', title: 'Refused (401, 403, 429)', yLabel: 'requests', color: '--series-loop-max' },
  { key: 'commits', title: 'Commits', yLabel: 'commits', color: '--series-commits' },
  { key: 'activeBoards', title: 'Active boards', yLabel: 'boards', color: '--series-rss' },
  { key: 'activeAgents', title: 'Active agents', yLabel: 'agents', color: '--series-latency' },
  { key: 'signups', title: 'Sign-ups', yLabel: 'accounts', color: '--series-loop' },
];
/** Counts on the axis: whole numbers only (a tick between two is left blank). */
const whole = (v: number) => (Number.isInteger(v) ? cell(v) : '');

function DaysCharts({ days }: { days: Json[] }) {
  const oldestFirst = useMemo(() => [...days].reverse(), [days]);
  const x = useMemo(() => oldestFirst.map((d) => Date.parse(`${String(d.day)}T00:00:00Z`) / 1000), [oldestFirst]);
  const [table, setTable] = useState(false);
  return (
    <>
      <div class="day-charts">
        {DAY_CHARTS.map((c) => (
          <Chart
            key={c.key}
            title={c.title}
            kind="bars"
            x={x}
            xAs="days"
            yLabel={`${c.yLabel} per day`}
            height={170}
            format={whole}
            series={[
              {
                label: words(c.key),
                color: c.color,
                values: oldestFirst.map((d) => (typeof d[c.key] === 'number' ? (d[c.key] as number) : null)),
              },
            ]}
          />
        ))}
      </div>
      <details class="as-table" onToggle={(e) => setTable((e.target as HTMLDetailsElement).open)}>
        <summary>Days as a table</summary>
        {table ? <DaysTable days={days} /> : null}
      </details>
    </>
  );
}

/** The days, newest first, every figure a column; a charted one under its chart's colour. */
function DaysTable({ days }: { days: Json[] }) {
  if (!days.length) return <p class="muted">No figures yet.</p>;
  const keys = Object.keys(days[0]!);
  const color = (k: string) => DAY_CHARTS.find((c) => c.key === k)?.color;
  return (
    <div class="scroll-x">
      <table class="list dense series-table">
        <thead>
          <tr>
            {keys.map((k) => (
              <th
                key={k}
                class={k === 'day' ? '' : 'num'}
                data-column={color(k) ? k : undefined}
                style={color(k) ? { '--series': `var(${color(k)!})` } : undefined}
              >
                {words(k)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr key={String(d.day)}>
              {keys.map((k) => (
                <td key={k} class={k === 'day' ? '' : 'num'}>
                  {cell(d[k])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** How often the Overview reads the nodes again while it is open. */
const REFRESH_MS = 5_000;

export function OverviewSection() {
  const tick = useTick(REFRESH_MS);
  const slow = Math.floor(tick / 12); // the 14 days and the store's health: every minute
  const utilization = useLoad(`utilization ${tick}`, () => client.get('/api/admin/utilization'));
  const history = useLoad(`history ${tick}`, () => client.get('/api/admin/utilization/history'));
  const durability = useLoad(`durability ${slow}`, () => client.get('/api/admin/durability'));
  const metrics = useLoad(`metrics ${slow}`, () =>
    client.get('/api/admin/metrics', { params: { query: { days: 14 } } }),
  );
  const alerts = (durability.data?.alerts ?? null) as
    { level: 'critical' | 'warning'; code: string; message: string }[] | null;
  const figures = new Map(rowsOf(utilization.data?.nodes).map((n) => [String(n.nodeId), n.figures]));
  return (
    <div class="grid2 overview">
      <section class="panel wide" aria-label="Alerts">
        <h2>Alerts</h2>
        {alerts === null ? null : alerts.length ? (
          <ul class="alerts">
            {alerts.map((a) => (
              <li key={a.code + a.message} class={`alert ${a.level}`}>
                <strong>{a.level}</strong> {a.message} <code class="muted">{a.code}</code>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">Nothing needs you now: the store answers, commits land, the bus is up, mail flows.</p>
        )}
      </section>
      <section class="panel wide" aria-label="Nodes">
        <h2>Nodes</h2>
        <p class="muted small">The last hour on each node, read again every {REFRESH_MS / 1000} s.</p>
        <ErrorNote error={history.error ?? utilization.error} />
        {history.data?.nodes.map((n) => (
          <div key={n.nodeId} class="node-block">
            <NodeCharts node={n} everyMs={history.data!.everyMs} />
            {figures.has(n.nodeId) ? (
              <details class="as-table">
                <summary>Figures now</summary>
                <Facts value={figures.get(n.nodeId)} />
              </details>
            ) : null}
          </div>
        ))}
      </section>
      <section class="panel wide" aria-label="Last 14 days">
        <h2>Last 14 days</h2>
        <ErrorNote error={metrics.error} />
        {metrics.data ? <DaysCharts days={rowsOf(metrics.data.days)} /> : null}
      </section>
      <section class="panel wide">
        <h2>Durability</h2>
        <ErrorNote error={durability.error} />
        {durability.data ? <Facts value={withoutAlerts(durability.data)} /> : null}
      </section>
    </div>
  );
}
