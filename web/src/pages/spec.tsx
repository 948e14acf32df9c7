// The board's spec: what its fleet builds to. Clauses S-n with their status and version, the items
// linking each, and those linking a retired clause flagged (as GET /api/status lists them in
// retiredSpecLinks). Admins add and edit clauses; an edit names the version it was begun from, so
// one made meanwhile is refused (VERSION_MISMATCH) instead of overwritten. Read once when the
// section opens, then kept current by spec.* events and the items' patches (their `spec` links).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { BoardApiError, client, refused } from '../api.js';
import type { BoardModel } from '../board-model.js';
import type { Clause, ClauseEvent, ItemPatch } from '../types.js';
import { ago, ConfirmButton, ErrorNote, Field, Form, useAction, who } from '../ui/kit.js';
import { byWorkId, newerOf, tally } from './live-entries.js';

const STATUSES = ['draft', 'accepted', 'retired'] as const;
type Status = (typeof STATUSES)[number];

const byClauseId = (c: ClauseEvent) => c.clauseId;
const clauseSeq = (id: string) => Number(id.slice(2));
const strip = ({ linkedBy: _l, ...clause }: Clause): ClauseEvent => clause;

/**
 * Clauses by id and each item's links. A read replaces the links wholesale, so the items' patches
 * heard while it was in flight are applied again over it (they may be newer than what it read).
 */
function useSpec(projectId: string, model: BoardModel) {
  const [clauses, setClauses] = useState<ReadonlyMap<string, ClauseEvent>>(new Map());
  const [links, setLinks] = useState<ReadonlyMap<string, readonly string[]>>(new Map());
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const merge = useCallback((views: ClauseEvent[]) => setClauses((held) => newerOf(held, views, byClauseId)), []);
  useEffect(() => {
    let live = true;
    const inFlight = new Set<Map<string, string[]>>();
    const read = async () => {
      const heard = new Map<string, string[]>();
      inFlight.add(heard);
      try {
        const r = await client.get('/api/spec', { params: { query: { projectId } } });
        if (!live) return;
        const read = new Map<string, string[]>();
        for (const c of r.clauses) for (const w of c.linkedBy) read.set(w, [...(read.get(w) ?? []), c.clauseId]);
        for (const [w, spec] of heard) read.set(w, spec);
        setLinks(read);
        merge(r.clauses.map(strip));
        setLoaded(true);
        setError(null);
      } catch (e) {
        if (live) setError(e);
      } finally {
        inFlight.delete(heard);
      }
    };
    const stop = model.listen((e) => {
      if (e === null) return void read();
      if (e.type.startsWith('spec.')) {
        const clause = (e.data as { clause?: ClauseEvent }).clause;
        return clause ? merge([clause]) : undefined;
      }
      const { item, items } = e.data as { item?: ItemPatch; items?: ItemPatch[] };
      const changed = [item, ...(items ?? [])].filter(
        (p): p is ItemPatch & { spec: string[] } => p?.spec !== undefined,
      );
      if (!changed.length) return;
      for (const p of changed) for (const heard of inFlight) heard.set(p.workId, p.spec);
      setLinks((held) => {
        const next = new Map(held);
        for (const p of changed) {
          if (p.spec.length) next.set(p.workId, p.spec);
          else next.delete(p.workId);
        }
        return next;
      });
    });
    void read();
    return () => ((live = false), stop());
  }, [projectId, model]);
  return { clauses, links, loaded, error, merge };
}

export default function SpecSection({
  projectId,
  model,
  role,
}: {
  projectId: string;
  model: BoardModel;
  role: string | null;
}) {
  const { clauses, links, loaded, error, merge } = useSpec(projectId, model);
  const admin = role === 'admin' || role === 'owner';
  const list = [...clauses.values()].sort((a, b) => clauseSeq(a.clauseId) - clauseSeq(b.clauseId));
  const linkedBy = new Map<string, string[]>();
  for (const [workId, ids] of links) for (const id of ids) linkedBy.set(id, [...(linkedBy.get(id) ?? []), workId]);
  for (const ids of linkedBy.values()) ids.sort(byWorkId);
  const flagged = list
    .filter((c) => c.status === 'retired')
    .flatMap((c) => (linkedBy.get(c.clauseId) ?? []).map((workId) => ({ workId, clauseId: c.clauseId })));
  return (
    <section class="panel entries" aria-label="Spec">
      <div class="section-head">
        <h2>Spec</h2>
        <span class="muted" data-count={list.length}>
          {list.length} {list.length === 1 ? 'clause' : 'clauses'}
          {list.length ? ` · ${tally(list, (c) => c.status, STATUSES)}` : ''}
        </span>
      </div>
      <p class="muted small">
        What the fleet builds to. Items link the clauses they implement (their spec field); admins add clauses, accept
        them and retire those that no longer hold.
      </p>
      <ErrorNote error={error} />
      {flagged.length ? (
        <div
          class="note warn"
          role="status"
          data-retired-links={flagged.map((f) => `${f.workId}:${f.clauseId}`).join(' ')}
        >
          <strong>
            {flagged.length === 1 ? '1 item links' : `${flagged.length} items link`} a retired clause: re-point{' '}
            {flagged.length === 1 ? 'it' : 'them'} or reopen the clause.
          </strong>
          <span>
            {flagged.map((f, i) => (
              <span key={`${f.workId}:${f.clauseId}`}>
                {i ? ', ' : ''}
                <a href={`/boards/${projectId}/items/${f.workId}`}>{f.workId}</a> → {f.clauseId}
              </span>
            ))}
          </span>
        </div>
      ) : null}
      {admin ? <AddClause projectId={projectId} added={(c) => merge([strip(c)])} /> : null}
      {!loaded ? (
        <p class="muted">Loading the spec…</p>
      ) : list.length === 0 ? (
        <p class="muted">No clauses yet. {admin ? 'Add the first one above.' : 'Admins add them.'}</p>
      ) : (
        <div class="entry-list">
          {list.map((c) => (
            <ClauseCard
              key={c.clauseId}
              projectId={projectId}
              clause={c}
              linkedBy={linkedBy.get(c.clauseId) ?? []}
              model={model}
              admin={admin}
              merged={(v) => merge([strip(v)])}
            />
          ))}
        </div>
      )}
    </section>
  );
}

function AddClause({ projectId, added }: { projectId: string; added: (c: Clause) => void }) {
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const [open, setOpen] = useState(false);
  const send = useAction(async () => {
    const clause = await client.post('/api/spec', { params: { query: { projectId } }, body: { title, text } });
    added(clause);
    setOpen(false);
    setTitle('');
    setText('');
    return `Added ${clause.clauseId} as a draft.`;
  });
  return (
    <>
      <details class="compose" open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
        <summary>Add a clause</summary>
        <Form onSubmit={() => void send.go()} pending={send.pending} error={send.error} submit="Add clause">
          <Field label="Title" name="clause-title" value={title} onInput={setTitle} required maxLength={200} />
          <label class="field">
            <span>Text</span>
            <textarea
              name="clause-text"
              value={text}
              required
              maxLength={4000}
              onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
            />
            <small>It starts as a draft with the next id (S-n); accept it when it holds.</small>
          </label>
        </Form>
      </details>
      {send.done && !open ? (
        <div class="note ok compose-done" role="status">
          {send.done}
        </div>
      ) : null}
    </>
  );
}

interface Draft {
  version: number;
  title: string;
  text: string;
  status: Status;
}

/** What a refused edit says: a clause changed meanwhile is named with the version it is at now. */
function refusal(e: unknown, clauseId: string): unknown {
  if (!refused(e, 'VERSION_MISMATCH')) return e;
  const now = typeof e.details?.version === 'number' ? ` (it is at version ${e.details.version} now)` : '';
  const { status, code, meaning, details, requestId } = e;
  return new BoardApiError({
    status,
    code,
    meaning,
    details,
    requestId,
    message: `${clauseId} changed meanwhile${now}: your edit was not saved.`,
    fix: 'Reload the clause to see the change, then make your edit again.',
  });
}

function ClauseCard({
  projectId,
  clause,
  linkedBy,
  model,
  admin,
  merged,
}: {
  projectId: string;
  clause: ClauseEvent;
  linkedBy: string[];
  model: BoardModel;
  admin: boolean;
  merged: (c: Clause) => void;
}) {
  const [draft, setDraft] = useState<Draft | null>(null);
  const params = { path: { clauseId: clause.clauseId }, query: { projectId } };
  const patch = useAction(async (body: Partial<Draft> & { version: number }, done: string) => {
    try {
      merged(await client.patch('/api/spec/{clauseId}', { params, body }));
    } catch (e) {
      throw refusal(e, clause.clauseId);
    }
    setDraft(null);
    return done;
  });
  const edit = (from: ClauseEvent = clause) => (
    patch.reset(),
    setDraft({ version: from.version, title: from.title, text: from.text, status: from.status })
  );
  // After a refusal: the clause as it is now (the page may not have heard the change yet), to edit again.
  const reload = useAction(async () => {
    const now = await client.get('/api/spec/{clauseId}', { params });
    merged(now);
    edit(strip(now));
  });
  const stale = refused(patch.error, 'VERSION_MISMATCH');
  const retired = clause.status === 'retired';
  const move = (status: Status, done: string) => void patch.go({ version: clause.version, status }, done);
  return (
    <article
      class={`entry ${clause.status}`}
      aria-label={`Clause ${clause.clauseId}`}
      data-clause-id={clause.clauseId}
      data-status={clause.status}
      data-version={clause.version}
    >
      <header class="row">
        <code class="key">{clause.clauseId}</code>
        <strong class="grow-text">{clause.title}</strong>
        <span class={`pill s-${clause.status}`}>{clause.status}</span>
        <span class="muted small">v{clause.version}</span>
      </header>
      <p class="pre clause-text">{clause.text}</p>
      <div class="linked">
        <span class="muted">
          {linkedBy.length
            ? `Linked by ${linkedBy.length} ${linkedBy.length === 1 ? 'item' : 'items'}:`
            : 'No item links it.'}
        </span>
        {linkedBy.map((workId) => {
          const card = model.card(workId);
          return (
            <a
              key={workId}
              href={`/boards/${projectId}/items/${workId}`}
              class={`link-chip ${retired ? 'flagged' : ''}`}
              data-work-id={workId}
              data-flagged={retired ? 'retired' : undefined}
              title={retired ? `${workId} links ${clause.clauseId}, which is retired` : card?.title}
            >
              {retired ? '⚠ ' : ''}
              {workId}
              {card ? (
                <span class="muted">
                  {' '}
                  {card.title.length > 40 ? `${card.title.slice(0, 40)}…` : card.title} · {card.state.replace('_', ' ')}
                </span>
              ) : null}
            </a>
          );
        })}
      </div>
      <p class="at muted small">
        added by {who(clause.createdBy)} {ago(clause.createdAt)}
        {clause.version > 1 ? ` · changed by ${who(clause.updatedBy)} ${ago(clause.updatedAt)}` : ''}
      </p>
      {admin && !draft ? (
        <div class="row actions">
          <button type="button" onClick={() => edit()}>
            Edit
          </button>
          {clause.status === 'draft' ? (
            <button
              type="button"
              disabled={patch.pending}
              onClick={() => move('accepted', `${clause.clauseId} accepted.`)}
            >
              Accept
            </button>
          ) : null}
          {!retired ? (
            <ConfirmButton
              label="Retire"
              danger
              question={`Retire ${clause.clauseId}? Items linking it will be flagged.`}
              onConfirm={() => move('retired', `${clause.clauseId} retired.`)}
              disabled={patch.pending}
            />
          ) : null}
          {retired ? (
            <button
              type="button"
              disabled={patch.pending}
              onClick={() => move('draft', `${clause.clauseId} reopened as a draft.`)}
            >
              Reopen as draft
            </button>
          ) : null}
        </div>
      ) : null}
      {draft ? (
        <form
          class="form inset"
          aria-label={`Edit ${clause.clauseId}`}
          onSubmit={(e) => (
            e.preventDefault(),
            patch.pending ||
              void patch.go(
                { version: draft.version, title: draft.title, text: draft.text, status: draft.status },
                `${clause.clauseId} saved.`,
              )
          )}
        >
          {clause.version !== draft.version && !stale ? (
            <div class="note warn" role="status">
              {clause.clauseId} changed while you were editing (now version {clause.version}): saving will be refused.
            </div>
          ) : null}
          <Field
            label="Title"
            name="edit-title"
            value={draft.title}
            onInput={(title) => setDraft({ ...draft, title })}
            required
            maxLength={200}
          />
          <label class="field">
            <span>Text</span>
            <textarea
              name="edit-text"
              value={draft.text}
              required
              maxLength={4000}
              onInput={(e) => setDraft({ ...draft, text: (e.target as HTMLTextAreaElement).value })}
            />
          </label>
          <label class="field">
            <span>Status</span>
            <select
              name="edit-status"
              value={draft.status}
              onChange={(e) => setDraft({ ...draft, status: (e.target as HTMLSelectElement).value as Status })}
            >
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <div class="row">
            <button type="submit" class="primary" disabled={patch.pending}>
              {patch.pending ? 'Saving…' : 'Save'}
            </button>
            <button type="button" onClick={() => (patch.reset(), setDraft(null))}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      <ErrorNote error={patch.error} />
      {stale && draft ? (
        <div class="row">
          <button type="button" class="primary" disabled={reload.pending} onClick={() => void reload.go()}>
            Reload {clause.clauseId}
          </button>
        </div>
      ) : null}
      <ErrorNote error={reload.error} />
      {patch.done ? (
        <div class="note ok" role="status">
          {patch.done}
        </div>
      ) : null}
    </article>
  );
}
