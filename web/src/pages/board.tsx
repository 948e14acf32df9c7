// The live board: columns by state (counts, most relevant cards first, a page at a time), the
// roster, shouts newest first with a composer, the activity stream, the dependency graph, item
// creation, and the doctrine, spec and feedback sections. Loaded once from the socket's snapshot,
// then kept current by its events alone: the page reads nothing over REST to keep up
// (board-model.ts); a section reads its own list once when it opens.
import { lazy, Suspense } from 'preact/compat';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { client } from '../api.js';
import { BoardModel, type Agent } from '../board-model.js';
import type { BoardEvent, BoardFeed, Shout } from '../live.js';
import { now } from '../session.js';
import type { Item } from '../types.js';
import { ago, describeEvent, ErrorNote, Field, Form, useAction, who, Who } from '../ui/kit.js';
import { Columns } from './columns.js';
import { PausedBanner, usePause } from './board-pause.js';
import { NewItems } from './new-items.js';

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
