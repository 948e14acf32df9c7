// The board's doctrine: what its fleet agrees on. Each entry with its level, status, who agreed
// and its blind-test results; members propose, agree and take blind tests (digests only), admins
// ratify, reject and set the level. Read once when the section opens, then kept current by the
// board's doctrine.* events (each carries the entry as it now stands).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { client } from '../api.js';
import type { BoardModel } from '../board-model.js';
import type { Doctrine } from '../types.js';
import { me } from '../session.js';
import { DigestField } from '../ui/digest.js';
import { ago, ErrorNote, Field, Form, useAction, who } from '../ui/kit.js';
import { newerOf, tally } from './live-entries.js';

const STATUS_ORDER = ['ratified', 'proposed', 'rejected'] as const;
const LEVELS = ['advisory', 'expected', 'required'] as const;
const SHOWN_AGREEMENTS = 6;

const bySlug = (e: Doctrine) => e.slug;
const inOrder = (a: Doctrine, b: Doctrine) =>
  STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status) || a.slug.localeCompare(b.slug);

/** The board's entries: read when the section opens and each time the board is loaded again, merged with the events by version. */
function useDoctrine(projectId: string, model: BoardModel) {
  const [entries, setEntries] = useState<ReadonlyMap<string, Doctrine>>(new Map());
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const merge = useCallback((views: Doctrine[]) => setEntries((held) => newerOf(held, views, bySlug)), []);
  useEffect(() => {
    let live = true;
    const read = () =>
      client.get('/api/doctrine', { params: { query: { projectId } } }).then(
        (r) => live && (merge(r.entries), setLoaded(true), setError(null)),
        (e: unknown) => live && setError(e),
      );
    const stop = model.listen((e) => {
      if (e === null) return void read();
      const entry = e.type.startsWith('doctrine.') ? (e.data as { entry?: Doctrine }).entry : undefined;
      if (entry) merge([entry]);
    });
    void read();
    return () => ((live = false), stop());
  }, [projectId, model]);
  return { entries, loaded, error, merge };
}

export default function DoctrineSection({
  projectId,
  model,
  role,
}: {
  projectId: string;
  model: BoardModel;
  role: string | null;
}) {
  const { entries, loaded, error, merge } = useDoctrine(projectId, model);
  const member = role !== null && role !== 'viewer' && role !== 'operator';
  const admin = role === 'admin' || role === 'owner';
  const list = [...entries.values()].sort(inOrder);
  return (
    <section class="panel entries" aria-label="Doctrine">
      <div class="section-head">
        <h2>Doctrine</h2>
        <span class="muted" data-count={list.length}>
          {list.length} {list.length === 1 ? 'entry' : 'entries'}
          {list.length ? ` · ${tally(list, (e) => e.status, STATUS_ORDER)}` : ''}
        </span>
      </div>
      <p class="muted small">
        What the fleet agrees to work by. Members propose entries and agree with them; admins ratify or reject them and
        set their level (advisory, expected, required). A blind test checks that an agent follows an entry without being
        shown it: the agent sends the digest of its answer, never the answer, and it passes when that equals the digest
        an admin set.
      </p>
      <ErrorNote error={error} />
      {member ? <Propose projectId={projectId} admin={admin} proposed={(e) => merge([e])} /> : null}
      {!loaded ? (
        <p class="muted">Loading the doctrine…</p>
      ) : list.length === 0 ? (
        <p class="muted">No doctrine yet. {member ? 'Propose the first entry above.' : ''}</p>
      ) : (
        <div class="entry-list">
          {list.map((e) => (
            <Entry
              key={e.slug}
              projectId={projectId}
              entry={e}
              member={member}
              admin={admin}
              merged={(v) => merge([v])}
            />
          ))}
        </div>
      )}
    </section>
  );
}

function Propose({
  projectId,
  admin,
  proposed,
}: {
  projectId: string;
  admin: boolean;
  proposed: (e: Doctrine) => void;
}) {
  const [slug, setSlug] = useState('');
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const [digest, setDigest] = useState('');
  const [open, setOpen] = useState(false);
  const send = useAction(async () => {
    const entry = await client.post('/api/doctrine', {
      params: { query: { projectId } },
      body: { slug, title, text, ...(digest ? { expectedDigest: digest } : {}) },
    });
    proposed(entry);
    setOpen(false);
    setSlug('');
    setTitle('');
    setText('');
    setDigest('');
    return `Proposed ${entry.slug}.`;
  });
  return (
    <>
      <details class="compose" open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
        <summary>Propose an entry</summary>
        <Form onSubmit={() => void send.go()} pending={send.pending} error={send.error} submit="Propose">
          <div class="row top">
            <label class="field grow">
              <span>Slug</span>
              <input
                name="doctrine-slug"
                value={slug}
                required
                maxLength={64}
                pattern="[a-z0-9][a-z0-9-]*"
                placeholder="tests-first"
                onInput={(e) => setSlug((e.target as HTMLInputElement).value)}
              />
              <small>Lowercase letters, digits and dashes; items link the entry by it.</small>
            </label>
            <div class="grow">
              <Field label="Title" name="doctrine-title" value={title} onInput={setTitle} required maxLength={200} />
            </div>
          </div>
          <label class="field">
            <span>Text</span>
            <textarea
              name="doctrine-text"
              value={text}
              required
              maxLength={4000}
              onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
            />
          </label>
          {admin ? (
            <DigestField
              label="Expected answer digest (optional; admins only)"
              answerLabel="Expected answer"
              name="doctrine-expected"
              value={digest}
              onChange={setDigest}
            />
          ) : null}
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

type Open = 'blind' | 'ratify' | 'reject' | null;

function Entry({
  projectId,
  entry,
  member,
  admin,
  merged,
}: {
  projectId: string;
  entry: Doctrine;
  member: boolean;
  admin: boolean;
  merged: (e: Doctrine) => void;
}) {
  const [open, setOpen] = useState<Open>(null);
  const [digest, setDigest] = useState('');
  const [reason, setReason] = useState('');
  const params = { path: { slug: entry.slug }, query: { projectId } };
  const act = useAction(
    async (done: string, send: () => Promise<{ entry: Doctrine; result?: 'pass' | 'fail'; already?: boolean }>) => {
      const res = await send();
      merged(res.entry);
      setOpen(null);
      setDigest('');
      setReason('');
      if (res.result)
        return res.result === 'pass'
          ? 'Blind test passed: your answer matched.'
          : 'Blind test failed: your answer did not match.';
      return res.already ? 'You had agreed already.' : done;
    },
  );
  const toggle = (o: Open) => (act.reset(), setDigest(''), setOpen(open === o ? null : o));
  const { status, blindTests: bt } = entry;
  const mine = me.value ? entry.agreedBy.includes(`user:${me.value.id}`) : false;
  const firstLine = entry.text.split('\n')[0]!;
  return (
    <article
      class={`entry ${status}`}
      aria-label={`Doctrine ${entry.slug}`}
      data-slug={entry.slug}
      data-status={status}
      data-level={entry.level}
      data-agreements={entry.agreements}
      data-pass={bt.pass}
      data-fail={bt.fail}
    >
      <header class="row">
        <code class="key">{entry.slug}</code>
        <strong class="grow-text">{entry.title}</strong>
        <span class={`pill s-${status}`}>{status}</span>
        <span class={`pill l-${entry.level}`} title="level">
          {entry.level}
        </span>
      </header>
      <details class="text">
        <summary>{firstLine.length > 140 ? `${firstLine.slice(0, 140)}…` : firstLine}</summary>
        <p class="pre">{entry.text}</p>
      </details>
      <dl class="facts">
        <div class="row">
          <dt class="muted">Agreed</dt>
          <dd data-agreed-by={entry.agreedBy.join(' ')}>
            <strong>{entry.agreements}</strong>
            {entry.agreements ? ` · ${entry.agreedBy.slice(0, SHOWN_AGREEMENTS).map(who).join(', ')}` : ' · nobody yet'}
            {entry.agreements > SHOWN_AGREEMENTS ? (
              <span title={entry.agreedBy.map(who).join(', ')}> and {entry.agreements - SHOWN_AGREEMENTS} more</span>
            ) : null}
          </dd>
        </div>
        <div class="row">
          <dt class="muted">Blind tests</dt>
          <dd>
            {bt.pass + bt.fail === 0 ? (
              <span class="muted">
                {entry.expectedDigestSet
                  ? 'none taken yet'
                  : status === 'rejected'
                    ? 'none'
                    : 'cannot be taken: no expected answer digest (an admin sets it when ratifying)'}
              </span>
            ) : (
              <>
                <span class="ok-text">{bt.pass} pass</span> ·{' '}
                <span class={bt.fail ? 'bad-text' : ''}>{bt.fail} fail</span>
                <span class="results" aria-hidden="true">
                  {bt.recent.slice(-10).map((r) => (
                    <span
                      key={`${r.at}${r.by}`}
                      class={`result ${r.result}`}
                      title={`${r.result} by ${who(r.by)} ${ago(r.at)}`}
                    />
                  ))}
                </span>
                {bt.recent.length ? (
                  <span class="muted">
                    {' '}
                    last {bt.recent.at(-1)!.result} by {who(bt.recent.at(-1)!.by)} {ago(bt.recent.at(-1)!.at)}
                  </span>
                ) : null}
              </>
            )}
          </dd>
        </div>
        <div class="row">
          <dt class="muted">Proposed</dt>
          <dd>
            by {who(entry.proposedBy)} {ago(entry.createdAt)}
            {entry.updatedAt !== entry.createdAt ? (
              <span class="muted">
                {' '}
                · changed {ago(entry.updatedAt)} · version {entry.version}
              </span>
            ) : null}
          </dd>
        </div>
        {status === 'rejected' && entry.rejectedReason ? (
          <div class="row">
            <dt class="muted">Rejected because</dt>
            <dd>{entry.rejectedReason}</dd>
          </div>
        ) : null}
      </dl>
      {member || admin ? (
        <div class="row actions">
          {member && status !== 'rejected' ? (
            mine ? (
              <span class="muted">You agreed.</span>
            ) : (
              <button
                type="button"
                disabled={act.pending}
                onClick={() =>
                  void act.go(`You agreed with ${entry.slug}.`, () =>
                    client.post('/api/doctrine/{slug}/agree', { params }),
                  )
                }
              >
                Agree
              </button>
            )
          ) : null}
          {member && status === 'ratified' && entry.expectedDigestSet ? (
            <button type="button" aria-expanded={open === 'blind'} onClick={() => toggle('blind')}>
              Take blind test
            </button>
          ) : null}
          {admin && status !== 'ratified' ? (
            <button type="button" aria-expanded={open === 'ratify'} onClick={() => toggle('ratify')}>
              Ratify…
            </button>
          ) : null}
          {admin && status !== 'rejected' ? (
            <button type="button" class="danger" aria-expanded={open === 'reject'} onClick={() => toggle('reject')}>
              Reject…
            </button>
          ) : null}
          {admin && status !== 'rejected' ? (
            <label class="inline">
              <span class="muted">Level</span>
              <select
                name="level"
                value={entry.level}
                disabled={act.pending}
                onChange={(e) => {
                  const level = (e.target as HTMLSelectElement).value as (typeof LEVELS)[number];
                  void act.go(`Level set to ${level}.`, () =>
                    client.post('/api/doctrine/{slug}/level', { params, body: { level } }),
                  );
                }}
              >
                {LEVELS.map((l) => (
                  <option key={l} value={l}>
                    {l}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
        </div>
      ) : null}
      {open === 'blind' ? (
        <Form
          onSubmit={() =>
            void act.go('', () =>
              client.post('/api/doctrine/{slug}/blind-test', { params, body: { answerDigest: digest } }),
            )
          }
          pending={act.pending}
          error={null}
          submit="Send the digest"
          class="inset"
        >
          <DigestField
            label="Your answer’s digest"
            answerLabel="Your answer (without looking at the entry’s expected one)"
            name="answer-digest"
            value={digest}
            onChange={setDigest}
            required
          />
        </Form>
      ) : null}
      {open === 'ratify' ? (
        <Form
          onSubmit={() =>
            void act.go(`Ratified ${entry.slug}.`, () =>
              client.post('/api/doctrine/{slug}/ratify', {
                params,
                ...(digest && { body: { expectedDigest: digest } }),
              }),
            )
          }
          pending={act.pending}
          error={null}
          submit="Ratify"
          class="inset"
        >
          <DigestField
            label={
              entry.expectedDigestSet
                ? 'Expected answer digest (optional: replaces the one set)'
                : 'Expected answer digest (optional: blind tests need one)'
            }
            answerLabel="Expected answer"
            name="expected-digest"
            value={digest}
            onChange={setDigest}
          />
        </Form>
      ) : null}
      {open === 'reject' ? (
        <Form
          onSubmit={() =>
            void act.go(`Rejected ${entry.slug}.`, () =>
              client.post('/api/doctrine/{slug}/reject', { params, ...(reason && { body: { reason } }) }),
            )
          }
          pending={act.pending}
          error={null}
          submit="Reject"
          class="inset"
        >
          <Field
            label="Why (optional)"
            name="reject-reason"
            value={reason}
            onInput={setReason}
            maxLength={500}
            hint="Kept with the entry; it stays on the board and may be ratified later."
          />
        </Form>
      ) : null}
      <ErrorNote error={act.error} />
      {act.done ? (
        <div class={`note ${/failed/.test(act.done) ? 'error' : 'ok'}`} role="status">
          {act.done}
        </div>
      ) : null}
    </article>
  );
}
