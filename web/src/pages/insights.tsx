// A board's numbers by UTC day as pictures: the flow of items through the states, throughput,
// ready-to-done times, verify and lease rates, agents active; each with its numbers in a table.
// Read once from GET /api/metrics, then today's kept current by the board's socket alone (watching
// spends nothing of the person's rate budget). Loaded lazily: uPlot comes with this page only.
import { effect } from '@preact/signals';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import { BoardModel, STATES, type State } from '../board-model.js';
import type { BoardEvent } from '../types.js';
import { Chart, type ChartProps, type ChartSeries } from '../ui/chart.js';
import { ErrorNote } from '../ui/kit.js';
import { STATE_LABEL } from './columns.js';

/** One UTC day of GET /api/metrics's `days` (oldest first, contiguous; today's counts are now's). */
export type Day = Reply<'/api/metrics', 'get'>['days'][number];
type Tally = Pick<Day, 'done' | 'grants' | 'expiries' | 'verdicts' | 'passes'>;

const HOUR_MS = 3_600_000;
/** What was heard is drawn at most this often: a fleet's events cost a redraw or two a second. */
const FLUSH_MS = 500;
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const nextDay = (day: string): string => dayOf(Date.parse(`${day}T00:00:00Z`) + 86_400_000);

/**
 * What the page heard since the metrics were read, by UTC day: the counters the server folds from
 * the same events (machines/board-stats.ts, which web/ may not import), the most agents active
 * within an hour, and the columns' counts as each day went on.
 */
export class Heard {
  readonly tallies = new Map<string, Tally>();
  readonly peaks = new Map<string, number>();
  readonly counts = new Map<string, Record<string, number>>();
  private acted = new Map<string, number>();
  /** While the metrics are read: what is heard meanwhile is taken to be in them (they name no seq). */
  private reading = true;

  hear(e: BoardEvent): void {
    if (e.seq === null) return; // a lease warning: not logged, not counted
    const at = Date.parse(e.at);
    if (e.actor.startsWith('agent:')) {
      this.acted.set(e.actor, at);
      this.peak(at);
    }
    if (!this.reading) this.count(e, at);
  }

  /** The metrics came back: count from here on. */
  settle(): void {
    this.reading = false;
  }

  /** The metrics are read again (the board was reloaded): what was counted is in them. */
  restart(): void {
    this.tallies.clear();
    this.reading = true;
  }

  private count(e: BoardEvent, at: number): void {
    const day = dayOf(at);
    const t = this.tallies.get(day) ?? { done: 0, grants: 0, expiries: 0, verdicts: 0, passes: 0 };
    this.tallies.set(day, t);
    if (e.type === 'lease.granted') t.grants++;
    else if (e.type === 'lease.expired') t.expiries++;
    else if (e.type === 'item.state' && e.data.to === 'done' && e.data.rewound !== true) t.done++;
    else if (e.type === 'item.verified') {
      t.verdicts++;
      if ((e.data.verification as { verdict?: string } | undefined)?.verdict === 'pass') t.passes++;
    }
  }

  private peak(at: number): void {
    let active = 0;
    for (const [agent, last] of this.acted)
      if (at - last < HOUR_MS) active++;
      else this.acted.delete(agent);
    const day = dayOf(at);
    this.peaks.set(day, Math.max(this.peaks.get(day) ?? 0, active));
  }
}

const emptyDay = (day: string, counts: Day['counts']): Day => ({
  day,
  done: 0,
  grants: 0,
  expiries: 0,
  verdicts: 0,
  passes: 0,
  readyToDoneSeconds: { median: null, p90: null },
  verifyPassRate: null,
  leaseExpiryRate: null,
  agentsActive: 0,
  counts,
});

/** The metrics' days carried on to `today`, with what was heard since added in. */
export function merged(base: readonly Day[], heard: Heard, today: string): Day[] {
  const days = base.map((d) => ({ ...d }));
  const live = heard.tallies.size > 0 || heard.counts.size > 0;
  if (live && !days.length) days.push(emptyDay(today, null));
  while (days.length && days.at(-1)!.day < today) days.push(emptyDay(nextDay(days.at(-1)!.day), days.at(-1)!.counts));
  for (const d of days) {
    const t = heard.tallies.get(d.day);
    if (t) {
      for (const k of ['done', 'grants', 'expiries', 'verdicts', 'passes'] as const) d[k] += t[k];
      d.verifyPassRate = d.verdicts ? d.passes / d.verdicts : null;
      d.leaseExpiryRate = d.grants ? d.expiries / d.grants : null;
    }
    d.agentsActive = Math.max(d.agentsActive, heard.peaks.get(d.day) ?? 0);
    d.counts = heard.counts.get(d.day) ?? d.counts;
  }
  return days;
}

const hasHistory = (days: readonly Day[]): boolean =>
  days.some((d) => d.done || d.grants || d.verdicts || Object.values(d.counts ?? {}).some((n) => n > 0));

export default function InsightsPage({ projectId }: { projectId: string }) {
  const model = useMemo(() => new BoardModel(projectId), [projectId]);
  const heard = useMemo(() => new Heard(), [model]);
  const [base, setBase] = useState<Day[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  const [readAt, setReadAt] = useState<number | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  /** Reads the metrics again: when the person asks (today's times are as of the last read), or the board was reloaded. */
  const reread = useRef(() => {});
  useEffect(() => {
    let live = true;
    const read = () =>
      void client.get('/api/metrics', { params: { query: { projectId } } }).then(
        (m) => {
          if (!live) return;
          heard.settle();
          setBase(m.days);
          setReadAt(Date.now());
          setError(null);
        },
        (e: unknown) => live && setError(e),
      );
    const flush = () => {
      timer.current = null;
      if (model.loaded.peek()) heard.counts.set(dayOf(Date.now()), countsOf(model));
      setTick((t) => t + 1);
    };
    const arm = () => void (timer.current ??= setTimeout(flush, FLUSH_MS));
    reread.current = () => (heard.restart(), read());
    const stop = model.listen((e) => {
      if (e === null) return reread.current();
      heard.hear(e);
      arm();
    });
    // The columns move a little after the events that move them (the model shows them together):
    // each change draws again, so the last one is never missed.
    const unwatch = effect(() => void (model.columns.value, arm()));
    read();
    return () => ((live = false), stop(), unwatch(), model.stop(), timer.current && clearTimeout(timer.current));
  }, [model]);

  const loaded = model.loaded.value;
  const today = dayOf(Date.now());
  const days = useMemo(() => {
    if (loaded) heard.counts.set(today, countsOf(model));
    return base ? merged(base, heard, today) : null;
  }, [base, tick, loaded, today]);
  const feed = model.feed;

  return (
    <div class="insights-page" data-loads={feed.loads.value}>
      <div class="board-head">
        <h1>
          Insights <span class="muted">· {model.name.value ?? 'Board'}</span>
        </h1>
        <span class={`conn ${feed.state.value}`} role="status" data-state={feed.state.value}>
          {feed.state.value === 'live' ? 'live' : feed.state.value}
        </span>
        <a href={`/boards/${encodeURIComponent(projectId)}`}>Back to the board</a>
        <span class="grow" />
        {days && hasHistory(days) ? (
          <span class="muted">
            {days.length > 1 ? `By UTC day, ${days[0]!.day} to ${days.at(-1)!.day}.` : `Today (UTC), ${days[0]!.day}.`}{' '}
            Today’s counts, done, leases and verdicts move with the board; its ready-to-done times are as of{' '}
            {readAt ? hhmm(readAt) : '…'}.{' '}
            <button type="button" class="link" onClick={() => reread.current()}>
              Read again
            </button>
          </span>
        ) : null}
      </div>
      <ErrorNote error={error} />
      {feed.ended.value ? (
        <div class="note error" role="alert">
          {feed.ended.value} <a href="/projects">Your boards</a>
        </div>
      ) : null}
      {!days ? (
        error ? null : (
          <p class="muted">Loading the numbers…</p>
        )
      ) : !hasHistory(days) ? (
        <div class="panel" data-empty>
          <h2>No history yet</h2>
          <p class="muted">
            The charts fill in as items are made and agents work them: items per state each day, items done, times from
            ready to done, verify and lease rates, agents active. This page follows the board live.
          </p>
        </div>
      ) : (
        <Charts days={days} reread={() => reread.current()} />
      )}
    </div>
  );
}

function countsOf(model: BoardModel): Record<string, number> {
  const columns = model.columns.peek();
  return Object.fromEntries(STATES.map((st) => [st, columns.get(st)?.length ?? 0]));
}

const int = (n: number) => n.toLocaleString('en-US');
const hhmm = (ms: number) => new Date(ms).toTimeString().slice(0, 5);
const percent = (r: number | null) => (r === null ? '—' : `${(r * 100).toFixed(1)}%`);
const DURATION_UNITS = [
  [3 * 3600, 3600, 'hours'],
  [180, 60, 'minutes'],
  [0, 1, 'seconds'],
] as const;

interface Column {
  key: string;
  label: string;
  cell: (d: Day) => string;
  state?: State;
}

function Charts({ days, reread }: { days: Day[]; reread: () => void }) {
  // Items were done since the read: their times come with the next.
  const later = days.at(-1)!.done > 0 ? reread : undefined;
  const x = useMemo(() => days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000), [days]);
  const longest = Math.max(0, ...days.map((d) => d.readyToDoneSeconds.p90 ?? d.readyToDoneSeconds.median ?? 0));
  const [, per, unit] = DURATION_UNITS.find(([from]) => longest >= from)!;
  const inUnit = (s: number | null) => (s === null ? null : s / per);
  const oneDecimal = (v: number | null) => (v === null ? '—' : String(Math.round(v * 10) / 10));
  const series = useMemo(() => {
    const of = (label: string, color: string, value: (d: Day) => number | null): ChartSeries => ({
      label,
      color,
      values: days.map(value),
    });
    return {
      // Stacked from the bottom, so that read top down the bands are the columns left to right.
      flow: [...STATES].reverse().map((st) => of(STATE_LABEL[st], `--state-${st}`, (d) => d.counts?.[st] ?? null)),
      done: [of('done', '--state-done', (d) => d.done)],
      times: [
        of('median', '--accent', (d) => inUnit(d.readyToDoneSeconds.median)),
        of('90th percentile', '--state-claimed', (d) => inUnit(d.readyToDoneSeconds.p90)),
      ],
      rates: [
        of('verify pass rate', '--state-done', (d) => (d.verifyPassRate === null ? null : d.verifyPassRate * 100)),
        of('lease expiry rate', '--state-blocked', (d) =>
          d.leaseExpiryRate === null ? null : d.leaseExpiryRate * 100,
        ),
      ],
      agents: [of('agents active', '--accent', (d) => d.agentsActive)],
    };
  }, [days, per]);
  return (
    <div class="insights-grid">
      <Insight
        id="flow"
        wide
        note="Items in each state at each day’s end (today: now), stacked in the columns’ order."
        chart={{ title: 'Cumulative flow', x, series: series.flow, yLabel: 'items', kind: 'stacked', height: 300 }}
        columns={STATES.map((st) => ({
          key: st,
          label: STATE_LABEL[st],
          state: st,
          cell: (d) => (d.counts ? int(d.counts[st] ?? 0) : '—'),
        }))}
        days={days}
      />
      <Insight
        id="throughput"
        note="Items that reached done each day."
        chart={{ title: 'Throughput', x, series: series.done, yLabel: 'items done', kind: 'bars', format: int }}
        columns={[{ key: 'done', label: 'Done', cell: (d) => int(d.done) }]}
        days={days}
      />
      <Insight
        id="ready-to-done"
        none="No item had gone from ready to done when the numbers were read."
        again={later}
        note="From an item’s last becoming ready to its reaching done, among the items done that day (today’s as of the last read)."
        chart={{ title: 'Ready to done', x, series: series.times, yLabel: unit, format: (v) => oneDecimal(v) }}
        columns={[
          { key: 'median', label: `Median (${unit})`, cell: (d) => oneDecimal(inUnit(d.readyToDoneSeconds.median)) },
          { key: 'p90', label: `90th pct (${unit})`, cell: (d) => oneDecimal(inUnit(d.readyToDoneSeconds.p90)) },
        ]}
        days={days}
      />
      <Insight
        id="rates"
        none="No lease granted and no verdict given in these days yet."
        note="Verdicts that passed, and leases that ran out instead of being submitted or released."
        chart={{
          title: 'Verify pass and lease expiry rates',
          x,
          series: series.rates,
          yLabel: 'percent',
          yRange: [0, 100],
          format: (v) => `${Math.round(v)}%`,
        }}
        columns={[
          { key: 'verdicts', label: 'Verdicts', cell: (d) => int(d.verdicts) },
          { key: 'passes', label: 'Passed', cell: (d) => int(d.passes) },
          { key: 'pass-rate', label: 'Pass rate', cell: (d) => percent(d.verifyPassRate) },
          { key: 'grants', label: 'Leases', cell: (d) => int(d.grants) },
          { key: 'expiries', label: 'Expired', cell: (d) => int(d.expiries) },
          { key: 'expiry-rate', label: 'Expiry rate', cell: (d) => percent(d.leaseExpiryRate) },
        ]}
        days={days}
      />
      <Insight
        id="agents"
        note="The most agents active within one hour, each day."
        chart={{ title: 'Agents active', x, series: series.agents, yLabel: 'agents', kind: 'bars', format: int }}
        columns={[{ key: 'agents', label: 'Agents active', cell: (d) => int(d.agentsActive) }]}
        days={days}
      />
    </div>
  );
}

/** One chart with its numbers a click away: a table of the same days, newest first. */
function Insight(p: {
  id: string;
  note: string;
  /** What to say instead of an empty plot when no day has a value. */
  none?: string;
  /** Offered beside `none` when a new read would have values. */
  again?: () => void;
  chart: ChartProps;
  columns: Column[];
  days: Day[];
  wide?: boolean;
}) {
  const blank = p.chart.series.every((s) => s.values.every((v) => v === null));
  return (
    <section class={`panel insight${p.wide ? ' wide' : ''}`} data-chart={p.id} aria-label={p.chart.title}>
      {blank ? (
        <figure class="chart" aria-label={p.chart.title} data-blank>
          <figcaption>{p.chart.title}</figcaption>
          <div class="chart-blank muted">
            <span>
              {p.none ?? 'Nothing to draw yet.'}{' '}
              {p.again ? (
                <button type="button" class="link" onClick={p.again}>
                  Read again
                </button>
              ) : null}
            </span>
          </div>
        </figure>
      ) : (
        <Chart {...p.chart} />
      )}
      <p class="muted">{p.note}</p>
      <details>
        <summary>Table</summary>
        <div class="table-scroll">
          <table class="list">
            <thead>
              <tr>
                <th>Day (UTC)</th>
                {p.columns.map((c) => (
                  <th key={c.key} class="num">
                    {c.state ? <span class={`swatch state-${c.state}`} aria-hidden="true" /> : null}
                    {c.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {[...p.days].reverse().map((d) => (
                <tr key={d.day} data-day={d.day}>
                  <td>{d.day}</td>
                  {p.columns.map((c) => (
                    <td key={c.key} class="num" data-col={c.key}>
                      {c.cell(d)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}
