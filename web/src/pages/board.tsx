// The live board: columns by state, cards with holder and lease countdown, the roster, shouts
// with a composer, the activity stream, the dependency graph, and item creation. Loaded once,
// then kept current from /api/ws (resuming with `since` after a drop, never applying an event twice).
import { signal, type Signal } from '@preact/signals';
import { lazy, Suspense } from 'preact/compat';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, onBoard } from '../api.js';
import { BoardFeed, type BoardEvent, type Shout } from '../live.js';
import { chainOrder, seqOf } from '../chain.js';
import type { Item } from '../types.js';
import { ago, Countdown, describeEvent, ErrorNote, Field, Form, useAction, who } from '../ui/kit.js';

const Graph = lazy(() => import('./graph.js'));

export const STATES = ['pending', 'ready', 'claimed', 'awaiting_verify', 'verifying', 'done', 'blocked', 'cancelled'] as const;
const STATE_LABEL: Record<string, string> = { pending: 'Pending', ready: 'Ready', claimed: 'Claimed', awaiting_verify: 'Awaiting verify', verifying: 'Verifying', done: 'Done', blocked: 'Blocked', cancelled: 'Cancelled' };
const ACTIVITY_KEPT = 200;

interface Status {
  name: string;
  lastSeq: number;
  counts: Record<string, number>;
}

interface Agent {
  principal: string;
  status: string | null;
  note: string | null;
  workId: string | null;
  lastSeenAt: string | null;
  online: boolean;
  leases: string[];
}

/** What the page holds of one board, kept current by its feed. */
class BoardModel {
  readonly status = signal<Status | null>(null);
  readonly items = signal<ReadonlyMap<string, Item>>(new Map());
  readonly agents = signal<Agent[]>([]);
  readonly shouts = signal<Shout[]>([]);
  readonly activity = signal<BoardEvent[]>([]);
  readonly error = signal<unknown>(null);
  /** The last board.rewound heard while the page is open, for its notice. */
  readonly rewound = signal<BoardEvent | null>(null);
  feed: BoardFeed | null = null;
  private stale = new Set<string>();
  private everything = false;
  private flushing: Promise<void> | null = null;

  constructor(readonly projectId: string) {}

  private get = <T,>(path: string) => api<T>('GET', onBoard(this.projectId, path));

  async load(): Promise<void> {
    try {
      const status = await this.get<Status>('/api/status');
      const [items, agents, shouts, activity] = await Promise.all([this.allItems(), this.get<{ agents: Agent[] }>('/api/agents'), this.get<{ shouts: Shout[] }>('/api/shouts?limit=100'), this.get<{ events: BoardEvent[] }>('/api/activity?limit=50')]);
      this.status.value = status;
      this.items.value = items;
      this.agents.value = agents.agents;
      this.shouts.value = shouts.shouts;
      this.activity.value = activity.events;
      this.error.value = null;
      this.feed ??= new BoardFeed(this.projectId, status.lastSeq, { event: (e) => this.heard(e), shout: (s) => this.heardShout(s), resync: () => void this.load() });
    } catch (e) {
      this.error.value = e;
    }
  }

  stop(): void {
    this.feed?.stop();
  }

  private async allItems(): Promise<Map<string, Item>> {
    const all = new Map<string, Item>();
    for (let after: string | null = null; ; ) {
      const page: { items: Item[]; next: string | null } = await this.get(`/api/items?limit=1000${after ? `&after=${after}` : ''}`);
      for (const item of page.items) all.set(item.workId, item);
      if (!page.next) return all;
      after = page.next;
    }
  }

  /** An event: into the stream, and the items it names re-read (coalesced per frame). */
  private heard(e: BoardEvent): void {
    // An event the first read already held (it landed between the status and activity reads) is not listed twice.
    if (e.seq === null || !this.activity.value.some((x) => x.seq === e.seq)) this.activity.value = [e, ...this.activity.value].slice(0, ACTIVITY_KEPT);
    if (e.seq !== null && this.status.value) this.status.value = { ...this.status.value, lastSeq: e.seq };
    if (e.workId) this.stale.add(e.workId);
    else if (e.seq !== null) this.everything = true;
    // A rewind removes items without an event of their own: only a full read drops them.
    if (e.type === 'board.rewound') this.rewound.value = e;
    this.flushing ??= new Promise<void>((r) => requestAnimationFrame(() => r())).then(() => this.refresh());
  }

  private heardShout(s: Shout): void {
    if (!this.shouts.value.some((x) => x.id === s.id)) this.shouts.value = [...this.shouts.value, s].slice(-ACTIVITY_KEPT);
  }

  private async refresh(): Promise<void> {
    const ids = [...this.stale];
    const everything = this.everything;
    this.stale.clear();
    this.everything = false;
    try {
      const next = everything ? await this.allItems() : new Map(this.items.value);
      if (!everything) {
        // An item gone (404) leaves the board; any other failure keeps what the page had.
        const read = await Promise.all(ids.map((id) => this.get<Item>(`/api/items/${id}`).then((item): [string, Item | 'gone' | null] => [id, item], (e: unknown): [string, 'gone' | null] => [id, e instanceof ApiError && e.status === 404 ? 'gone' : null])));
        for (const [id, got] of read) {
          if (got === 'gone') next.delete(id);
          else if (got) next.set(id, got);
        }
      }
      this.items.value = next;
      this.agents.value = (await this.get<{ agents: Agent[] }>('/api/agents')).agents;
    } catch (e) {
      this.error.value = e;
    } finally {
      this.flushing = null;
      if (this.stale.size || this.everything) this.flushing = this.refresh();
    }
  }
}


export function BoardPage({ projectId }: { projectId: string }) {
  const model = useMemo(() => new BoardModel(projectId), [projectId]);
  useEffect(() => {
    void model.load();
    return () => model.stop();
  }, [model]);
  const [view, setView] = useState<'columns' | 'graph'>('columns');
  const status = model.status.value;
  const role = model.feed?.role.value ?? null;
  const canWrite = role !== null && role !== 'viewer';

  return (
    <>
      <div class="board-head">
        <h1>{status?.name ?? 'Board'}</h1>
        <ConnectionBadge feed={model.feed} />
        {role ? <span class="muted">you are {role}</span> : null}
        <a href={`/boards/${encodeURIComponent(projectId)}/members`}>Members</a>
        <span class="grow" />
        <div class="tabs" role="tablist">
          <a href="#columns" role="tab" class={view === 'columns' ? 'active' : ''} aria-selected={view === 'columns'} onClick={(e) => (e.preventDefault(), setView('columns'))}>
            Columns
          </a>
          <a href="#graph" role="tab" class={view === 'graph' ? 'active' : ''} aria-selected={view === 'graph'} onClick={(e) => (e.preventDefault(), setView('graph'))}>
            Dependencies
          </a>
        </div>
      </div>
      <ErrorNote error={model.error.value} />
      {model.feed?.ended.value ? (
        <div class="note error" role="alert" data-ended>
          {model.feed.ended.value} <a href="/projects">Your boards</a>
        </div>
      ) : null}
      {model.rewound.value ? <RewoundNotice event={model.rewound.value} manage={role === 'owner' || role === 'admin' ? `/account/rewind?projectId=${encodeURIComponent(projectId)}` : null} onDismiss={() => (model.rewound.value = null)} /> : null}
      <div class="board-layout board">
        <div>
          {view === 'columns' ? (
            <Columns projectId={projectId} items={model.items} />
          ) : (
            <Suspense fallback={<p class="muted">Laying out the graph…</p>}>
              <Graph projectId={projectId} items={[...model.items.value.values()]} />
            </Suspense>
          )}
          {canWrite ? <NewItems projectId={projectId} /> : null}
        </div>
        <aside class="side board-side">
          <Roster agents={model.agents.value} />
          <Shouts projectId={projectId} shouts={model.shouts.value} agents={model.agents.value} canWrite={canWrite} />
          <Activity events={model.activity.value} />
        </aside>
      </div>
    </>
  );
}

function ConnectionBadge({ feed }: { feed: BoardFeed | null }) {
  const state = feed?.state.value ?? 'connecting';
  const label = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', closed: 'offline', removed: 'no access' }[state];
  return (
    <span class={`conn ${state}`} role="status" aria-live="polite" data-state={state}>
      {label}
    </span>
  );
}

/** "Board rewound to point #12 by you": what a rewind did, until dismissed; owners and admins get the way to the points. */
function RewoundNotice({ event, manage, onDismiss }: { event: BoardEvent; manage: string | null; onDismiss: () => void }) {
  const data = event.data as { restorePointId?: string; slice?: string | null; counts?: { added: number; removed: number; changed: number; revokedLeases: number } };
  const id = (data.restorePointId ?? '').split('~')[0]!;
  const point = `#${id.slice(id.lastIndexOf('_') + 1)}`;
  const c = data.counts;
  const counted: [number, string][] = c ? [[c.removed, 'removed'], [c.added, 'restored'], [c.changed, 'changed'], [c.revokedLeases, c.revokedLeases === 1 ? 'lease ended' : 'leases ended']] : [];
  const parts = counted.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  return (
    <div class="note info notice" role="status" data-rewound={data.restorePointId}>
      <span>
        <strong>
          Board rewound to restore point {point}
          {data.slice ? ` (${data.slice} and its subtree)` : ''} by {who(event.actor)}
        </strong>{' '}
        <span class="muted">
          {ago(event.at)}
          {parts.length ? ` · ${parts.join(', ')}` : ''}
        </span>
      </span>
      <span class="row">
        {manage ? <a href={manage}>Restore points</a> : null}
        <button type="button" class="link" onClick={onDismiss}>
          Dismiss
        </button>
      </span>
    </div>
  );
}

function Columns({ projectId, items }: { projectId: string; items: Signal<ReadonlyMap<string, Item>> }) {
  const byState = new Map<string, Item[]>(STATES.map((s) => [s, []]));
  for (const item of items.value.values()) byState.get(item.state)?.push(item);
  for (const [state, list] of byState) list.sort(state === 'ready' || state === 'awaiting_verify' ? chainOrder : (a, b) => seqOf(a.workId) - seqOf(b.workId));
  return (
    <div class="columns">
      {STATES.map((state) => (
        <section class="column" aria-label={STATE_LABEL[state]} data-state={state} key={state}>
          <h2>
            <span>{STATE_LABEL[state]}</span>
            <span>{byState.get(state)!.length}</span>
          </h2>
          {byState.get(state)!.map((item) => (
            <Card projectId={projectId} item={item} key={item.workId} />
          ))}
        </section>
      ))}
    </div>
  );
}

function Card({ projectId, item }: { projectId: string; item: Item }) {
  const gate = item.verify === 'required' ? (item.verifications.at(-1)?.verdict === 'pass' ? 'verified' : item.verifications.at(-1)?.verdict === 'fail' ? 'failed verify' : 'verify required') : null;
  return (
    <a class={`card p${item.priority}`} href={`/boards/${projectId}/items/${item.workId}`} data-work-id={item.workId}>
      <div class="title">{item.title}</div>
      <div class="meta">
        <span>{item.workId}</span>
        <span>P{item.priority}</span>
        {item.labels.map((l) => (
          <span class="label" key={l}>
            {l}
          </span>
        ))}
      </div>
      <div class="meta">
        {item.lease ? (
          <span class="holder" title={item.lease.holder}>
            {item.lease.purpose === 'verify' ? 'verifying: ' : ''}
            {who(item.lease.holder)} <Countdown until={item.lease.expiresAt} />
          </span>
        ) : null}
        {item.attempts ? (
          <span>
            attempt {item.attempts}/{item.maxAttempts}
          </span>
        ) : null}
        {gate ? <span>{gate}</span> : null}
        {item.submission ? <code title={item.submission.head}>{item.submission.head.slice(0, 8)}</code> : null}
      </div>
    </a>
  );
}

function Roster({ agents }: { agents: Agent[] }) {
  return (
    <section class="panel" aria-label="Agents">
      <h2>Agents</h2>
      {agents.length === 0 ? <p class="muted">No agent has shown up yet.</p> : null}
      <ul class="feed">
        {agents.map((a) => (
          <li key={a.principal}>
            <span class={`dot ${a.online ? 'on' : ''}`} aria-label={a.online ? 'online' : 'offline'} />
            <strong title={a.principal}>{who(a.principal)}</strong> <span class="muted">{a.status ?? ''}</span>
            <div class="at">
              {a.lastSeenAt ? `seen ${ago(a.lastSeenAt)}` : 'no heartbeat yet'}
              {a.leases.length ? ` · holds ${a.leases.join(', ')}` : ''}
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Shouts({ projectId, shouts, agents, canWrite }: { projectId: string; shouts: Shout[]; agents: Agent[]; canWrite: boolean }) {
  const [text, setText] = useState('');
  const [to, setTo] = useState('');
  const [workId, setWorkId] = useState('');
  const send = useAction(async () => {
    await api('POST', onBoard(projectId, '/api/shouts'), { text, ...(to ? { to } : {}), ...(workId ? { workId } : {}) });
    setText('');
  });
  return (
    <section class="panel" aria-label="Shouts">
      <h2>Shouts</h2>
      <ul class="feed" aria-live="polite">
        {shouts.map((s) => (
          <li key={s.id} data-shout-id={s.id}>
            <strong title={s.from}>{who(s.from)}</strong>
            {s.to ? <span class="muted"> → {who(s.to)}</span> : null}
            {s.workId ? <span class="label">{s.workId}</span> : null} {s.text}
            <div class="at">
              {s.kind} · {ago(s.at)}
            </div>
          </li>
        ))}
      </ul>
      {canWrite ? (
        <Form onSubmit={() => void send.go()} pending={send.pending} error={send.error} submit="Shout">
          <Field label="Message" name="shout" value={text} onInput={setText} required maxLength={2000} />
          <div class="row">
            <label class="field grow">
              <span>To</span>
              <select name="to" value={to} onChange={(e) => setTo((e.target as HTMLSelectElement).value)}>
                <option value="">everyone</option>
                {agents.map((a) => (
                  <option value={a.principal} key={a.principal}>
                    {who(a.principal)}
                  </option>
                ))}
              </select>
            </label>
            <label class="field grow">
              <span>About item</span>
              <input name="shout-work-id" value={workId} placeholder="W-12" pattern="W-\d+" onInput={(e) => setWorkId((e.target as HTMLInputElement).value)} />
            </label>
          </div>
        </Form>
      ) : null}
    </section>
  );
}

function Activity({ events }: { events: BoardEvent[] }) {
  return (
    <section class="panel" aria-label="Activity">
      <h2>Activity</h2>
      <ul class="feed">
        {events.map((e, i) => (
          <li key={e.seq ?? `x${i}`} data-seq={e.seq ?? ''}>
            {describeEvent(e)}
            <div class="at">
              {who(e.actor)} · {ago(e.at)}
              {e.seq !== null ? ` · #${e.seq}` : ''}
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One item, or many pasted one per line: `Title | after 1, 3, W-12` (line numbers or work ids). */
function NewItems({ projectId }: { projectId: string }) {
  const [title, setTitle] = useState('');
  const [priority, setPriority] = useState('2');
  const [bulk, setBulk] = useState('');
  const one = useAction(async () => {
    const item = await api<Item>('POST', onBoard(projectId, '/api/items'), { title, priority: Number(priority) });
    setTitle('');
    return `Created ${item.workId}.`;
  });
  const many = useAction(async () => {
    const items = parseBulk(bulk);
    const res = await api<{ items: Item[] }>('POST', onBoard(projectId, '/api/items/batch'), { items });
    setBulk('');
    return `Created ${res.items.length} items (${res.items[0]?.workId}…${res.items.at(-1)?.workId}).`;
  });
  return (
    <section class="panel" style={{ marginTop: '1rem' }} aria-label="New items">
      <h2>New items</h2>
      <div class="row" style={{ alignItems: 'start' }}>
        <div class="grow">
          <Form onSubmit={() => void one.go()} pending={one.pending} error={one.error} submit="Create item" success={one.done}>
            <Field label="Title" name="title" value={title} onInput={setTitle} required maxLength={200} />
            <label class="field">
              <span>Priority</span>
              <select name="priority" value={priority} onChange={(e) => setPriority((e.target as HTMLSelectElement).value)}>
                {[0, 1, 2, 3, 4].map((p) => (
                  <option value={p} key={p}>
                    P{p}
                    {p === 0 ? ' (highest)' : ''}
                  </option>
                ))}
              </select>
            </label>
          </Form>
        </div>
        <div class="grow">
          <Form onSubmit={() => void many.go()} pending={many.pending} error={many.error} submit="Create all" success={many.done}>
            <label class="field">
              <span>Paste a list</span>
              <textarea name="bulk" value={bulk} placeholder={'Design the schema\nWrite the migration | after 1\nShip it | after 2, W-4'} onInput={(e) => setBulk((e.target as HTMLTextAreaElement).value)} />
              <small>One item per line; “| after 1, W-4” makes it depend on line 1 and on W-4.</small>
            </label>
          </Form>
        </div>
      </div>
    </section>
  );
}

/** Lines into batch items: dependencies by line number become refs, work ids stay as they are. */
export function parseBulk(text: string): { title: string; ref: string; dependsOn: string[] }[] {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.map((line, i) => {
    const [title, after = ''] = line.split(/\s*\|\s*after\s*/i);
    const deps = after.split(/[\s,]+/).filter(Boolean).map((d) => (/^\d+$/.test(d) ? `line-${d}` : d));
    return { title: title!.trim(), ref: `line-${i + 1}`, dependsOn: deps };
  });
}
