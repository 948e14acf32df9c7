// One item: its fields, lease, submission and verifications, the doctrine entries and spec clauses
// it links (with their level and status), its history from the log, comments, and the operator
// moves the person's role allows, each behind a confirmation. Live from /api/ws.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client, sendReorder } from '../api.js';
import type { State } from '../board-model.js';
import { BoardFeed, type BoardEvent } from '../live.js';
import { moveInChain } from '../chain.js';
import type { ClauseEvent, Doctrine, Item, ItemDetail, ItemPatch } from '../types.js';
import { ago, ConfirmButton, Countdown, describeEvent, ErrorNote, Field, Form, useAction, who } from '../ui/kit.js';

type Comment = Reply<'/api/items/{workId}/comments', 'get'>['comments'][number];

const OPERATOR = ['admin', 'owner'];
const MOVES: {
  action: 'block' | 'unblock' | 'cancel' | 'reopen';
  label: string;
  done: string;
  when: (state: string) => boolean;
}[] = [
  { action: 'block', label: 'Block', done: 'Blocked', when: (s) => !['blocked', 'done', 'cancelled'].includes(s) },
  { action: 'unblock', label: 'Unblock', done: 'Unblocked', when: (s) => s === 'blocked' },
  { action: 'cancel', label: 'Cancel item', done: 'Cancelled', when: (s) => !['done', 'cancelled'].includes(s) },
  { action: 'reopen', label: 'Reopen', done: 'Reopened', when: (s) => s === 'done' || s === 'cancelled' },
];

/** The states whose order is the chain agents claim from: a move to its head means something only there. */
const IN_CHAIN: readonly string[] = ['pending', 'ready'];

export function ItemPage({ projectId, workId }: { projectId: string; workId: string }) {
  const [item, setItem] = useState<ItemDetail | null>(null);
  const [clauses, setClauses] = useState<ReadonlyMap<string, ClauseEvent>>(new Map());
  const [history, setHistory] = useState<BoardEvent[]>([]);
  const [comments, setComments] = useState<Comment[]>([]);
  const load = useAction(async () => {
    const params = { path: { workId }, query: { projectId } };
    const [it, hist, com] = await Promise.all([
      client.get('/api/items/{workId}', { params }),
      client.post('/api/history/query', { params: { query: { projectId } }, body: { workId, limit: 100 } }),
      client.get('/api/items/{workId}/comments', { params }),
    ]);
    setItem(it);
    // The document leaves an event's shape open (each type has its own data): they are the socket's events.
    setHistory(hist.events as unknown as BoardEvent[]);
    setComments(com.comments);
    // The clauses it links, with their status (a retired one is flagged); spec.* events keep them current.
    if (it.spec.length) {
      const spec = await client.get('/api/spec', { params: { query: { projectId } } });
      setClauses(new Map(spec.clauses.map((c) => [c.clauseId, c])));
    }
  });
  useEffect(() => {
    void load.go();
  }, [projectId, workId]);
  // Live: an event about this item is applied from its patch (no read back); what a patch cannot
  // say (a rewind, a missed stretch) reloads. The subscription also says the person's role.
  const [feed, setFeed] = useState<BoardFeed | null>(null);
  useEffect(() => {
    const heard = (e: BoardEvent) => {
      if (e.type === 'board.rewound') return void load.go();
      if (e.type.startsWith('doctrine.')) return heardEntry((e.data as { entry?: Doctrine }).entry);
      if (e.type.startsWith('spec.')) return heardClause((e.data as { clause?: ClauseEvent }).clause);
      if (e.workId !== workId) return;
      const patch = (e.data as { item?: ItemPatch }).item;
      if (e.seq !== null) setHistory((h) => (h.some((x) => x.seq === e.seq) ? h : [e, ...h]));
      // Once: the person's own comment may already be in the list the reload after adding it read.
      if (e.type === 'item.comment' && e.seq !== null)
        setComments((c) =>
          c.some((x) => x.seq === e.seq)
            ? c
            : [...c, { seq: e.seq!, by: e.actor, text: String(e.data.text), at: e.at }],
        );
      else if (patch?.doctrine || patch?.spec)
        void load.go(); // new links: their levels and statuses are read with the item
      else if (patch) setItem((held) => (held && held.version < patch.version ? { ...held, ...patch } : held));
      else if (e.seq !== null) void load.go();
    };
    const heardEntry = (entry: Doctrine | undefined) =>
      entry &&
      setItem((held) =>
        held?.doctrine.includes(entry.slug)
          ? {
              ...held,
              doctrineLinks: held.doctrineLinks.map((l) =>
                l.slug === entry.slug ? { slug: l.slug, level: entry.level, status: entry.status } : l,
              ),
            }
          : held,
      );
    const heardClause = (clause: ClauseEvent | undefined) =>
      clause &&
      setClauses((held) =>
        (held.get(clause.clauseId)?.version ?? 0) < clause.version ? new Map(held).set(clause.clauseId, clause) : held,
      );
    const opened = new BoardFeed(projectId, { event: heard, shout: () => undefined, resync: () => void load.go() });
    setFeed(opened);
    return () => opened.stop();
  }, [projectId, workId]);
  const role = feed?.role.value ?? null;

  const operator = role !== null && OPERATOR.includes(role);
  const member = role !== null && role !== 'viewer';
  const after = () => void load.go();

  return (
    <>
      <p>
        <a href={`/boards/${projectId}`}>← Board</a>
      </p>
      <ErrorNote error={load.error} />
      {item ? (
        <div class="board-layout">
          <div class="side">
            <section class="panel">
              <h1>
                {item.workId} · {item.title}
              </h1>
              <p class="muted">
                {item.state.replace('_', ' ')} · P{item.priority} · {item.type} · rank {item.rank ?? 'none'} · attempt{' '}
                {item.attempts}/{item.maxAttempts} · verify {item.verify} · version {item.version}
              </p>
              {item.description ? <p>{item.description}</p> : null}
              <dl class="facts">
                <Fact
                  name="Depends on"
                  value={
                    item.dependsOn.length
                      ? item.dependsOn.map((d) => (
                          <a key={d} href={`/boards/${projectId}/items/${d}`}>
                            {d}{' '}
                          </a>
                        ))
                      : '—'
                  }
                />
                <Fact name="Labels" value={item.labels.join(', ') || '—'} />
                <Fact
                  name="Doctrine"
                  value={
                    item.doctrineLinks.length ? <DoctrineLinks projectId={projectId} links={item.doctrineLinks} /> : '—'
                  }
                />
                <Fact
                  name="Spec"
                  value={item.spec.length ? <SpecLinks projectId={projectId} ids={item.spec} clauses={clauses} /> : '—'}
                />
                <Fact
                  name="Lease"
                  value={
                    item.lease ? (
                      <>
                        {item.lease.purpose} by <span title={item.lease.holder}>{who(item.lease.holder)}</span>, fencing{' '}
                        {item.lease.fencingToken}, <Countdown until={item.lease.expiresAt} />
                      </>
                    ) : (
                      'none'
                    )
                  }
                />
                <Fact
                  name="Submission"
                  value={
                    item.submission ? (
                      <>
                        <code>{item.submission.head}</code> by {who(item.submission.by)} {ago(item.submission.at)}
                      </>
                    ) : (
                      '—'
                    )
                  }
                />
                <Fact
                  name="Progress"
                  value={
                    item.progress ? `${item.progress.note} (${who(item.progress.by)}, ${ago(item.progress.at)})` : '—'
                  }
                />
                {item.blockedReason ? <Fact name="Blocked because" value={item.blockedReason} /> : null}
                {item.overridden ? (
                  <Fact name="Overridden" value={`${item.overridden.reason} (${who(item.overridden.by)})`} />
                ) : null}
              </dl>
              <h2>Verifications</h2>
              {item.verifications.length === 0 ? <p class="muted">None yet.</p> : null}
              <ul class="feed">
                {item.verifications.map((v) => (
                  <li key={v.at}>
                    <strong>{v.verdict}</strong> of <code>{v.head.slice(0, 12)}</code> by {who(v.by)} {ago(v.at)}
                    {v.finding ? <div class="at">{v.finding}</div> : null}
                    {v.evidence?.length ? <div class="at">evidence: {v.evidence.join(', ')}</div> : null}
                  </li>
                ))}
              </ul>
            </section>
            {operator ? <OperatorMoves projectId={projectId} item={item} done={after} /> : null}
            <Comments projectId={projectId} workId={workId} comments={comments} canWrite={member} done={after} />
          </div>
          <aside class="side">
            <section class="panel" aria-label="History">
              <h2>History</h2>
              <ul class="feed">
                {history.map((e) => (
                  <li key={e.seq}>
                    <span title={e.type}>{describeEvent(e)}</span> <span class="muted">{who(e.actor)}</span>
                    <div class="at">
                      #{e.seq} · {ago(e.at)} · <code class="raw">{e.type}</code>
                    </div>
                  </li>
                ))}
              </ul>
            </section>
          </aside>
        </div>
      ) : load.pending ? (
        <p class="muted">Loading…</p>
      ) : null}
    </>
  );
}

function DoctrineLinks({ projectId, links }: { projectId: string; links: ItemDetail['doctrineLinks'] }) {
  return (
    <span class="chips">
      {links.map((l) => (
        <span
          key={l.slug}
          class="link-chip"
          data-doctrine={l.slug}
          data-level={l.level ?? ''}
          data-status={l.status ?? ''}
        >
          <a href={`/boards/${encodeURIComponent(projectId)}#doctrine`}>
            <code>{l.slug}</code>
          </a>
          {l.level ? <span class={`pill l-${l.level}`}>{l.level}</span> : <span class="muted"> not on this board</span>}
          {l.status ? <span class={`pill s-${l.status}`}>{l.status}</span> : null}
        </span>
      ))}
    </span>
  );
}

function SpecLinks({
  projectId,
  ids,
  clauses,
}: {
  projectId: string;
  ids: string[];
  clauses: ReadonlyMap<string, ClauseEvent>;
}) {
  return (
    <span class="chips">
      {ids.map((id) => {
        const c = clauses.get(id);
        const retired = c?.status === 'retired';
        return (
          <span
            key={id}
            class={`link-chip ${retired ? 'flagged' : ''}`}
            data-clause-id={id}
            data-status={c?.status ?? ''}
            title={retired ? `${id} is retired: re-point this item or reopen the clause` : undefined}
          >
            {retired ? '⚠ ' : ''}
            <a href={`/boards/${encodeURIComponent(projectId)}#spec`}>
              <code>{id}</code>
            </a>{' '}
            {c ? <span>{c.title}</span> : null}
            {c ? <span class={`pill s-${c.status}`}>{c.status}</span> : null}
          </span>
        );
      })}
    </span>
  );
}

function Fact({ name, value }: { name: string; value: ComponentChildren }) {
  return (
    <div class="row">
      <dt class="muted">{name}</dt>
      <dd style={{ margin: 0 }}>{value}</dd>
    </div>
  );
}

function OperatorMoves({ projectId, item, done }: { projectId: string; item: Item; done: () => void }) {
  const [reason, setReason] = useState('');
  const move = useAction(async (m: (typeof MOVES)[number]) => {
    await client.post('/api/items/{workId}/state', {
      params: { path: { workId: item.workId }, query: { projectId } },
      body: { action: m.action, ...(reason ? { reason } : {}) },
    });
    done();
    return `${m.done} ${item.workId}.`;
  });
  const override = useAction(async () => {
    await client.post('/api/items/{workId}/override', {
      params: { path: { workId: item.workId }, query: { projectId } },
      body: { reason },
    });
    done();
    return 'Passed through the verify gate.';
  });
  const reorder = useAction(async (how: 'top' | -1 | 1) => {
    let workIds = [item.workId];
    if (how !== 'top') {
      // The whole column, page by page: a move worked out from part of the chain moves the wrong items.
      const chain: Item[] = [];
      let after: string | undefined;
      do {
        const page = await client.get('/api/items', {
          params: { query: { projectId, state: item.state as State, limit: '1000', ...(after ? { after } : {}) } },
        });
        chain.push(...page.items);
        after = page.next ?? undefined;
      } while (after);
      const moved = moveInChain(chain, item.workId, how);
      if (!moved) return how === -1 ? 'Already first in the chain.' : 'Already last in the chain.';
      workIds = moved;
    }
    await sendReorder(projectId, workIds);
    done();
    return how === 'top'
      ? 'Moved to the head of the chain.'
      : how === -1
        ? 'Moved up one place.'
        : 'Moved down one place.';
  });
  const error = move.error ?? override.error ?? reorder.error;
  const ok = move.done ?? override.done ?? reorder.done;
  return (
    <section class="panel" aria-label="Operator moves">
      <h2>Operator moves</h2>
      <Field
        label="Reason"
        name="reason"
        value={reason}
        onInput={setReason}
        maxLength={500}
        hint="Recorded with the move; an override needs one."
      />
      <div class="row" style={{ marginTop: '0.5rem' }}>
        {MOVES.filter((m) => m.when(item.state)).map((m) => (
          <ConfirmButton
            key={m.action}
            label={m.label}
            danger={m.action === 'cancel'}
            question={`${m.label} ${item.workId}?`}
            onConfirm={() => void move.go(m)}
            disabled={move.pending}
          />
        ))}
        {item.verify === 'required' && ['awaiting_verify', 'verifying'].includes(item.state) ? (
          <ConfirmButton
            label="Override"
            question={`Pass ${item.workId} without verification?`}
            onConfirm={() => void override.go()}
            disabled={!reason || override.pending}
          />
        ) : null}
        {IN_CHAIN.includes(item.state) ? (
          <ConfirmButton
            label="Move to top"
            question={`Put ${item.workId} at the head of the chain?`}
            onConfirm={() => void reorder.go('top')}
            disabled={reorder.pending}
          />
        ) : null}
        {item.state === 'ready' ? (
          <>
            <ConfirmButton
              label="Move up"
              question={`Move ${item.workId} one place up the chain?`}
              onConfirm={() => void reorder.go(-1)}
              disabled={reorder.pending}
            />
            <ConfirmButton
              label="Move down"
              question={`Move ${item.workId} one place down the chain?`}
              onConfirm={() => void reorder.go(1)}
              disabled={reorder.pending}
            />
          </>
        ) : null}
      </div>
      <ErrorNote error={error} />
      {ok ? (
        <div class="note ok" role="status">
          {ok}
        </div>
      ) : null}
    </section>
  );
}

function Comments({
  projectId,
  workId,
  comments,
  canWrite,
  done,
}: {
  projectId: string;
  workId: string;
  comments: Comment[];
  canWrite: boolean;
  done: () => void;
}) {
  const [text, setText] = useState('');
  const add = useAction(async () => {
    await client.post('/api/items/{workId}/comments', {
      params: { path: { workId }, query: { projectId } },
      body: { text },
    });
    setText('');
    done();
  });
  return (
    <section class="panel" aria-label="Comments">
      <h2>Comments</h2>
      <ul class="feed">
        {comments.map((c) => (
          <li key={c.seq}>
            {c.text}
            <div class="at">
              {who(c.by)} · {ago(c.at)}
            </div>
          </li>
        ))}
      </ul>
      {canWrite ? (
        <Form onSubmit={() => void add.go()} pending={add.pending} error={add.error} submit="Add comment">
          <Field label="Comment" name="comment" value={text} onInput={setText} required maxLength={2000} />
        </Form>
      ) : null}
    </section>
  );
}
