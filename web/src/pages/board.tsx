// The live board: columns by state (counts, most relevant cards first, a page at a time), the
// roster, shouts newest first with a composer, the activity stream, the dependency graph, item
// creation, and the doctrine, spec and feedback sections. Loaded once from the socket's snapshot,
// then kept current by its events alone: the page reads nothing over REST to keep up
// (board-model.ts); a section reads its own list once when it opens.
import { lazy, Suspense } from 'preact/compat';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, client } from '../api.js';
import { BoardModel, type Agent } from '../board-model.js';
import type { BoardEvent, BoardFeed, Shout } from '../live.js';
import { now } from '../session.js';
import type { Item } from '../types.js';
import { ago, describeEvent, ErrorNote, Field, Form, useAction, who, Who } from '../ui/kit.js';
import { Columns } from './columns.js';

const Graph = lazy(() => import('./graph.js'));
const DoctrineSection = lazy(() => import('./doctrine.js'));
const SpecSection = lazy(() => import('./spec.js'));
const FeedbackSection = lazy(() => import('./feedback.js'));

const VIEWS = [
  ['columns', 'Columns'],
  ['graph', 'Dependencies'],
  ['doctrine', 'Doctrine'],
  ['spec', 'Spec'],
  ['feedback', 'Feedback'],
] as const;
type View = (typeof VIEWS)[number][0];
/** The view the address names (`#spec`), so a section can be linked to and survives a reload. */
const viewOf = (hash: string): View => VIEWS.find(([v]) => `#${v}` === hash)?.[0] ?? 'columns';

export function BoardPage({ projectId }: { projectId: string }) {
  const model = useMemo(() => new BoardModel(projectId), [projectId]);
  useEffect(() => () => model.stop(), [model]);
  const [view, setView] = useState<View>(() => viewOf(location.hash));
  useEffect(() => {
    const follow = () => setView(viewOf(location.hash));
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  const open = (v: View) => (
    setView(v),
    history.replaceState(history.state, '', v === 'columns' ? location.pathname + location.search : `#${v}`)
  );
  const feed = model.feed;
  const role = feed.role.value;
  const canWrite = role !== null && role !== 'viewer';
  const operator = role === 'admin' || role === 'owner';
  const columns = model.columns.value;
  // The cards for the graph, new when a column changed (it lays out again only when items or links did).
  const all = useMemo(() => model.all() as Item[], [columns]);
  const agents = model.agents(now.value);
  const pause = usePause(model, projectId);

  return (
    <div class="board-page" data-seq={model.seq.value ?? ''} data-loads={feed.loads.value} data-gaps={feed.gaps.value}>
      <div class="board-head">
        <h1>{model.name.value ?? 'Board'}</h1>
        <ConnectionBadge feed={feed} />
        {role ? <span class="muted">you are {role}</span> : null}
        <a href={`/boards/${encodeURIComponent(projectId)}/members`}>Members</a>
        <a href={`/boards/${encodeURIComponent(projectId)}/insights`}>Insights</a>
        <span class="grow" />
        <div class="tabs" role="tablist">
          {VIEWS.map(([v, label]) => (
            <a
              key={v}
              href={`#${v}`}
              role="tab"
              class={view === v ? 'active' : ''}
              aria-selected={view === v}
              onClick={(e) => (e.preventDefault(), open(v))}
            >
              {label}
            </a>
          ))}
        </div>
      </div>
      <ErrorNote error={model.error.value} />
      {feed.ended.value ? (
        <div class="note error" role="alert" data-ended>
          {feed.ended.value} <a href="/projects">Your boards</a>
        </div>
      ) : null}
      <PausedBanner pause={pause} projectId={projectId} operator={operator} />
      {model.rewound.value ? (
        <RewoundNotice
          event={model.rewound.value}
          manage={operator ? `/account/rewind?projectId=${encodeURIComponent(projectId)}` : null}
          onDismiss={() => (model.rewound.value = null)}
        />
      ) : null}
      <div class="board-layout board">
        <div>
          {!model.loaded.value ? (
            <p class="muted">Loading the board…</p>
          ) : view === 'columns' ? (
            <Columns projectId={projectId} columns={columns} canReorder={operator} />
          ) : view === 'graph' ? (
            <Suspense fallback={<p class="muted">Laying out the graph…</p>}>
              <Graph projectId={projectId} items={all} />
            </Suspense>
          ) : (
            <Suspense fallback={<p class="muted">Loading…</p>}>
              {view === 'doctrine' ? <DoctrineSection projectId={projectId} model={model} role={role} /> : null}
              {view === 'spec' ? <SpecSection projectId={projectId} model={model} role={role} /> : null}
              {view === 'feedback' ? <FeedbackSection projectId={projectId} role={role} /> : null}
            </Suspense>
          )}
          {canWrite && (view === 'columns' || view === 'graph') ? (
            <NewItems projectId={projectId} pause={pause} operator={operator} />
          ) : null}
        </div>
        <aside class="side board-side">
          <Roster agents={agents} />
          <Shouts projectId={projectId} model={model} canWrite={canWrite} agents={agents} />
          <Activity events={model.activity.value} />
        </aside>
      </div>
    </div>
  );
}

function ConnectionBadge({ feed }: { feed: BoardFeed }) {
  const state = feed.state.value;
  const label = {
    connecting: 'connecting…',
    live: 'live',
    reconnecting: 'reconnecting…',
    closed: 'offline',
    removed: 'no access',
  }[state];
  return (
    <span class={`conn ${state}`} role="status" aria-live="polite" data-state={state}>
      {label}
    </span>
  );
}

/** "Board rewound to point #12 by you": what a rewind did, until dismissed; owners and admins get the way to the points. */
function RewoundNotice({
  event,
  manage,
  onDismiss,
}: {
  event: BoardEvent;
  manage: string | null;
  onDismiss: () => void;
}) {
  const data = event.data as {
    restorePointId?: string;
    slice?: string | null;
    counts?: { added: number; removed: number; changed: number; revokedLeases: number };
  };
  const id = (data.restorePointId ?? '').split('~')[0]!;
  const point = `#${id.slice(id.lastIndexOf('_') + 1)}`;
  const c = data.counts;
  const counted: [number, string][] = c
    ? [
        [c.removed, 'removed'],
        [c.added, 'restored'],
        [c.changed, 'changed'],
        [c.revokedLeases, c.revokedLeases === 1 ? 'lease ended' : 'leases ended'],
      ]
    : [];
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

function Roster({ agents }: { agents: Agent[] }) {
  const online = agents.filter((a) => a.online).length;
  return (
    <section class="panel" aria-label="Agents">
      <h2>
        Agents{' '}
        <span class="muted" data-online={online}>
          {online} online
        </span>
      </h2>
      {agents.length === 0 ? (
        <p class="muted">No agent has shown up yet: none has sent a heartbeat or acted on this board.</p>
      ) : null}
      <ul class="feed">
        {agents.map((a) => (
          <li key={a.principal} data-principal={a.principal}>
            <span role="img" class={`dot ${a.online ? 'on' : ''}`} aria-label={a.online ? 'online' : 'offline'} />
            <strong title={a.principal}>{who(a.principal)}</strong>{' '}
            <span class="muted">
              {[a.wasOn ? null : a.status, a.workId, a.note, a.wasOn ? `was on ${a.wasOn}` : null]
                .filter(Boolean)
                .join(' · ')}
            </span>
            <div class="at">
              {[a.actedAt ? `active ${ago(a.actedAt)}` : null, a.lastSeenAt ? `heartbeat ${ago(a.lastSeenAt)}` : null]
                .filter(Boolean)
                .join(' · ') || 'not seen yet'}
              {a.leases.length ? ` · holds ${a.leases.join(', ')}` : ''}
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Shouts newest first; scrolling to the end of the feed reads the page before it. */
function Shouts({
  projectId,
  model,
  agents,
  canWrite,
}: {
  projectId: string;
  model: BoardModel;
  agents: Agent[];
  canWrite: boolean;
}) {
  const [text, setText] = useState('');
  const [to, setTo] = useState('');
  const [workId, setWorkId] = useState('');
  const send = useAction(async () => {
    await client.post('/api/shouts', {
      params: { query: { projectId } },
      body: { text, ...(to ? { to } : {}), ...(workId ? { workId } : {}) },
    });
    setText('');
  });
  const shouts: Shout[] = model.shouts.value;
  const more = model.moreShouts.value;
  const list = useRef<HTMLUListElement>(null);
  const end = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (!more || !end.current) return;
    const seen = new IntersectionObserver(
      (entries) => entries.some((e) => e.isIntersecting) && void model.olderShouts(),
      { root: list.current, rootMargin: '100px' },
    );
    seen.observe(end.current);
    return () => seen.disconnect();
  }, [more, shouts.length]);
  return (
    <section class="panel" aria-label="Shouts">
      <h2>Shouts</h2>
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
              <input
                name="shout-work-id"
                value={workId}
                placeholder="W-12"
                pattern="W-\d+"
                onInput={(e) => setWorkId((e.target as HTMLInputElement).value)}
              />
            </label>
          </div>
        </Form>
      ) : null}
      <ul class="feed" aria-live="polite" ref={list}>
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
        {more ? (
          <li class="muted" ref={end} data-more-shouts>
            Older shouts…
          </li>
        ) : null}
      </ul>
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
            <span title={e.type}>{describeEvent(e)}</span>
            <div class="at">
              <Who principal={e.actor} /> · {ago(e.at)}
              {e.seq !== null ? ` · #${e.seq}` : ''} · <code class="raw">{e.type}</code>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One item, or many pasted one per line: `Title | after 1, 3, W-12` (line numbers or work ids). */
function NewItems({ projectId, pause, operator }: { projectId: string; pause: Pause | null; operator: boolean }) {
  const [title, setTitle] = useState('');
  const [priority, setPriority] = useState('2');
  const [bulk, setBulk] = useState('');
  const one = useAction(async () => {
    const item = await client.post('/api/items', {
      params: { query: { projectId } },
      body: { title, priority: Number(priority) },
    });
    setTitle('');
    return `Created ${item.workId}.`;
  });
  const many = useAction(async () => {
    const items = parseBulk(bulk);
    const res = await client.post('/api/items/batch', { params: { query: { projectId } }, body: { items } });
    setBulk('');
    return `Created ${res.items.length} items (${res.items[0]?.workId}…${res.items.at(-1)?.workId}).`;
  });
  return (
    <section class="panel" style={{ marginTop: '1rem' }} aria-label="New items">
      <h2>New items</h2>
      {pause ? (
        <p class="muted" data-paused-note>
          New items wait while the board is paused ({who(pause.by)} paused it {ago(pause.at)}).{' '}
          {operator
            ? 'Resume it with Resume in the banner above to add items again.'
            : 'An owner or admin of the board resumes it; then you can add items again.'}
        </p>
      ) : null}
      <fieldset class="plain" disabled={pause !== null}>
        <div class="row" style={{ alignItems: 'start' }}>
          <div class="grow">
            <Form
              onSubmit={() => void one.go()}
              pending={one.pending}
              error={one.error}
              submit="Create item"
              success={one.done}
            >
              <Field label="Title" name="title" value={title} onInput={setTitle} required maxLength={200} />
              <label class="field">
                <span>Priority</span>
                <select
                  name="priority"
                  value={priority}
                  onChange={(e) => setPriority((e.target as HTMLSelectElement).value)}
                >
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
            <Form
              onSubmit={() => void many.go()}
              pending={many.pending}
              error={many.error}
              submit="Create all"
              success={many.done}
            >
              <label class="field">
                <span>Paste a list</span>
                <textarea
                  name="bulk"
                  value={bulk}
                  placeholder={'Design the schema\nWrite the migration | after 1\nShip it | after 2, W-4'}
                  onInput={(e) => setBulk((e.target as HTMLTextAreaElement).value)}
                />
                <small>One item per line; “| after 1, W-4” makes it depend on line 1 and on W-4.</small>
              </label>
            </Form>
          </div>
        </div>
      </fieldset>
    </section>
  );
}

/**
 * Lines into batch items: dependencies by line number become refs, work ids stay as they are. A
 * reference the list cannot mean (a line it does not have, the line itself, neither a number nor a
 * work id) is refused here, in the list's own terms, before anything is sent.
 */
export function parseBulk(text: string): { title: string; ref: string; dependsOn: string[] }[] {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const bad = (message: string) =>
    new ApiError(
      400,
      'INVALID_INPUT',
      message,
      'After “| after”, name lines of this list by number or items by work id (W-12).',
    );
  return lines.map((line, i) => {
    const [title, after = ''] = line.split(/\s*\|\s*after\s*/i);
    const deps = after
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((d) => {
        const says = `Line ${i + 1} says “after ${d}”`;
        if (/^\d+$/.test(d)) {
          const n = Number(d);
          if (n < 1 || n > lines.length)
            throw bad(`${says}; the list has ${lines.length} line${lines.length === 1 ? '' : 's'}.`);
          if (n === i + 1) throw bad(`${says}: an item cannot wait for itself.`);
          return `line-${n}`;
        }
        if (!/^W-\d+$/i.test(d)) throw bad(`${says}: that is neither a line number nor a work id.`);
        return d.toUpperCase();
      });
    return { title: title!.trim(), ref: `line-${i + 1}`, dependsOn: deps };
  });
}

interface Pause {
  by: string;
  at: string;
}

/**
 * Whether the board is paused, by whom and since when: read from the status when the page loads
 * (and again after a reload of the board), then kept by the board.paused and board.resumed events.
 */
function usePause(model: BoardModel, projectId: string): Pause | null {
  const [pause, setPause] = useState<Pause | null>(null);
  useEffect(() => {
    let live = true;
    const read = () =>
      void client.get('/api/status', { params: { query: { projectId } } }).then(
        (s) => live && setPause(s.paused && s.pausedBy && s.pausedAt ? { by: s.pausedBy, at: s.pausedAt } : null),
        () => undefined, // the board's own error note shows a board that cannot be read
      );
    read();
    const stop = model.listen((e) => {
      if (e === null) read();
      else if (e.type === 'board.paused') setPause({ by: e.actor, at: e.at });
      else if (e.type === 'board.resumed') setPause(null);
    });
    return () => ((live = false), stop());
  }, [model, projectId]);
  return pause;
}

/**
 * A paused board says so while it is: who paused it, since when, what waits and what goes on; owners
 * and admins resume it here (New items is disabled meanwhile).
 */
function PausedBanner({ pause, projectId, operator }: { pause: Pause | null; projectId: string; operator: boolean }) {
  const resume = useAction(() =>
    client.patch('/api/projects/{projectId}', { params: { path: { projectId } }, body: { paused: false } }),
  );
  if (!pause) return null;
  return (
    <div class="note warn paused-banner" role="status" data-paused>
      <span class="grow">
        <strong>Paused</strong> by {who(pause.by)} {ago(pause.at)}: claims and changes to items wait; leases keep
        running, and renewals, releases, shouts and reads go on.
      </span>
      {operator ? (
        <>
          <a href={`/account/rewind?projectId=${encodeURIComponent(projectId)}`}>Rewind…</a>
          <button type="button" disabled={resume.pending} onClick={() => void resume.go()}>
            {resume.pending ? 'Resuming…' : 'Resume'}
          </button>
        </>
      ) : null}
      <ErrorNote error={resume.error} />
    </div>
  );
}
