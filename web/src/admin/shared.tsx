// What the console's sections share: operator API calls, a destructive action's confirm step
// (what it will do, and why, before it does it), and compact tables of whatever the routes answer.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { ErrorNote, useAction } from '../ui/kit.js';
import { eventWords } from '../ui/event-words.js';

/** Runs `load` when `key` (what it reads: a path and its query) changes, never while it is null; `reload()` asks again. */
export function useLoad<T>(key: string | null, load: () => Promise<T>) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (key === null) return;
    let live = true;
    setError(null);
    load().then(
      (d) => live && setData(d),
      (e) => live && setError(e),
    );
    return () => void (live = false);
  }, [key, tick]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}

/**
 * A destructive action: the button opens a step that says what will happen and asks why (the
 * reason goes into the audit row); only its second button acts. `confirmText`, when given, must be
 * typed exactly (a purge: the account's email).
 */
export function Guarded(props: {
  label: string;
  effect: ComponentChildren;
  run: (reason: string, confirm: string) => Promise<unknown>;
  confirmText?: string;
  danger?: boolean;
  done?: (result: unknown) => void;
}) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [confirm, setConfirm] = useState('');
  const action = useAction(props.run);
  if (!open) {
    return (
      <button
        type="button"
        class={props.danger === false ? '' : 'danger'}
        onClick={() => (setOpen(true), action.reset())}
      >
        {props.label}
      </button>
    );
  }
  const ready = reason.trim().length >= 3 && (props.confirmText === undefined || confirm === props.confirmText);
  return (
    <div class="guard" role="group" aria-label={props.label}>
      <strong>{props.label}</strong>
      <div class="effect">{props.effect}</div>
      <label class="field">
        <span>Reason (kept in the audit log)</span>
        <input
          name="reason"
          value={reason}
          maxLength={500}
          placeholder="ticket, report or why"
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
      </label>
      {props.confirmText !== undefined ? (
        <label class="field">
          <span>
            Type <code>{props.confirmText}</code> to confirm
          </span>
          <input name="confirm" value={confirm} onInput={(e) => setConfirm((e.target as HTMLInputElement).value)} />
        </label>
      ) : null}
      <ErrorNote error={action.error} />
      <div class="row">
        <button
          type="button"
          class={props.danger === false ? 'primary' : 'danger solid'}
          disabled={!ready || action.pending}
          onClick={() =>
            void action.go(reason.trim(), confirm).then((r) => {
              if (r === undefined) return;
              setOpen(false);
              setReason('');
              setConfirm('');
              props.done?.(r);
            })
          }
        >
          {action.pending ? 'Working…' : `Yes, ${props.label.toLowerCase()}`}
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** A value as one short cell: numbers grouped, nulls as a dash, objects as compact JSON. */
export function cell(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number')
    return Number.isInteger(v) ? v.toLocaleString('en') : v.toLocaleString('en', { maximumFractionDigits: 2 });
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** An object's leaves as dotted keys (arrays of scalars kept whole), for figures of any shape. */
export function flatten(value: unknown, prefix = '', out: [string, unknown][] = []): [string, unknown][] {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else out.push([prefix, value]);
  return out;
}

/** A key as words: `projectId` → "project id", `latencyMs.p50` → "latency ms · p50". */
export const words = (key: string): string =>
  key
    .split('.')
    .map((part) => part.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase())
    .join(' · ');

/** A byte count under a key that says so (`…Bytes`, `memory.*`), in KiB, MiB or GiB. */
const sized = (key: string, v: unknown): unknown => {
  if (typeof v !== 'number' || !/Bytes$|^memory\./.test(key)) return v;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = v;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  return `${n.toFixed(u ? 1 : 0)} ${units[u]}`;
};

/** Whether `key` names a time (`at`, `startedAt`, `window.at`...). */
const isTimeKey = (key: string) => /(^|\.)at$|At$/.test(key);

/**
 * A time as the console shows every time: UTC, "2026-11-30 00:24:12" (the column or the text around
 * it says UTC). The console is shared by operators in many zones and compared with server logs.
 */
export const utc = (t: string | number): string => new Date(t).toISOString().slice(0, 19).replace('T', ' ');

/** A time given under a key such as `at` or `startedAt` (epoch milliseconds or ISO), in UTC. */
const timed = (key: string, v: unknown): unknown =>
  isTimeKey(key) && ((typeof v === 'number' && v > 1e12) || (typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v)))
    ? `${utc(v)} UTC`
    : v;

/** Figures as a dense two-column list. */
export function Facts({ value }: { value: unknown }) {
  return (
    <dl class="facts dense">
      {flatten(value).map(([k, v]) => (
        <div class="row" key={k}>
          <dt>{words(k)}</dt>
          <dd>{cell(sized(k, timed(k, v)))}</dd>
        </div>
      ))}
    </dl>
  );
}

const KINDS: Record<string, string> = {
  user: 'account',
  account: 'account',
  agent: 'agent',
  token: 'token',
  board: 'board',
};

/** The accounts a page names (the audit's and abuse's `accounts`), by id: their addresses, and whether deleted. */
export type Accounts = Readonly<Record<string, { email: string | null; deleted: boolean }>>;

/**
 * `user:<id>`, `account:<id>`, `agent:<id>`, `provider`... as words: an account by its address
 * from `accounts` (linked to its page; "deleted" beside one deleted since, its short id once
 * purged), else "account 0d7e695e"; "agent 1f2e3d4c", "payment provider"; the whole value on
 * hover. An address or any other value is shown as it is.
 */
export function Principal({ value, accounts }: { value: string | null; accounts?: Accounts | undefined }) {
  if (value === null) return <>—</>;
  if (value === 'provider') return <span title={value}>payment provider</span>;
  const [, kind = '', id = ''] = /^([a-z]+):(.+)$/.exec(value) ?? [];
  const name = KINDS[kind];
  if (!name) return <code>{value}</code>;
  const short = /^[0-9a-f]{8}-[0-9a-f-]{27}$/i.test(id) ? id.slice(0, 8) : id;
  if (name !== 'account')
    return (
      <span title={value}>
        {name} {short}
      </span>
    );
  const known = accounts && Object.hasOwn(accounts, id) ? accounts[id] : undefined;
  const deleted = known?.deleted ? <span class="muted"> (deleted)</span> : null;
  return known && known.email === null ? (
    <span title={value}>
      {name} {short}
      {deleted}
    </span>
  ) : (
    <>
      <a href={`/admin/users/${encodeURIComponent(id)}`} title={value}>
        {known?.email ?? `${name} ${short}`}
      </a>
      {deleted}
    </>
  );
}

/** An audit action or board event in words (ui/event-words.ts), its raw name beside it in small code. */
export function Action({ name, class: className }: { name: string; class?: string }) {
  return (
    <span class={className} title={name}>
      {eventWords(name)} <code class="raw">{name}</code>
    </span>
  );
}

/** Who acted: an account an operator acted as (an impersonation session) names both. */
function Actor({ row, accounts }: { row: Record<string, unknown>; accounts: Accounts | undefined }) {
  const actor = row.actor as string;
  const data = row.data as Record<string, unknown>;
  if (typeof data.impersonatedBy !== 'string') return <Principal value={actor} accounts={accounts} />;
  return (
    <>
      operator <Principal value={`user:${data.impersonatedBy}`} accounts={accounts} /> as{' '}
      <Principal value={actor} accounts={accounts} />
    </>
  );
}

/**
 * How the audit's tables show who acted, what they did and to what: in words, accounts by their
 * addresses when the page names them (`accounts`), the raw values on hover.
 */
export const auditCells = (accounts?: Accounts) => ({
  actor: (r: Record<string, unknown>) => <Actor row={r} accounts={accounts} />,
  action: (r: Record<string, unknown>) => <Action name={r.action as string} />,
  target: (r: Record<string, unknown>) => <Principal value={r.target as string | null} accounts={accounts} />,
});

/** Rows of objects as a table, columns from their keys (nested values as JSON); `show` draws a column's cells its own way. */
export function Rows({
  rows,
  empty,
  columns,
  show = {},
}: {
  rows: readonly Record<string, unknown>[];
  empty: string;
  columns?: readonly string[];
  show?: Readonly<Record<string, (row: Record<string, unknown>) => ComponentChildren>>;
}) {
  if (!rows.length) return <p class="muted">{empty}</p>;
  const keys = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return (
    <div class="scroll-x">
      <table class="list dense">
        <thead>
          <tr>
            {keys.map((k) => (
              <th key={k}>{isTimeKey(k) ? `${words(k)} (UTC)` : words(k)}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}>
              {keys.map((k) =>
                show[k] ? (
                  <td key={k}>{show[k](r)}</td>
                ) : (
                  <td key={k} title={cell(timed(k, r[k]))}>
                    {cell(isTimeKey(k) && typeof r[k] === 'string' ? utc(r[k]) : timed(k, r[k]))}
                  </td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A time of day in UTC to the millisecond, for a column headed "(UTC)". */
export const clock = (t: string | number): string => new Date(t).toISOString().slice(11, 23);

/** A cursor-paged list's way back to the newest page and on to older ones. */
export function Pager({
  cursor,
  next,
  go,
}: {
  cursor: string | null;
  next: string | null;
  go: (cursor: string | null) => void;
}) {
  return (
    <div class="row pager">
      {cursor ? (
        <button type="button" onClick={() => go(null)}>
          Newest
        </button>
      ) : null}
      {next ? (
        <button type="button" onClick={() => go(next)}>
          Older
        </button>
      ) : null}
    </div>
  );
}
