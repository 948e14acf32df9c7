// Feedback: agents' reports from every board, open ones first, to resolve, dismiss or promote into
// an item on their board. Each action goes through a confirm step that says what it does and asks why.
import { useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import { ago, ErrorNote } from '../ui/kit.js';
import { Guarded, useLoad, Pager } from './shared.js';

type Entry = Reply<'/api/admin/feedback', 'get'>['feedback'][number];

const STATUSES = ['open', 'promoting', 'promoted', 'resolved', 'dismissed', 'all'] as const;
type Shown = (typeof STATUSES)[number];

/** Open entries before the rest, each group newest first (the page came newest first). */
const openFirst = (entries: readonly Entry[]): Entry[] => [
  ...entries.filter((e) => e.status === 'open'),
  ...entries.filter((e) => e.status !== 'open'),
];

export function FeedbackSection() {
  const [status, setStatus] = useState<Shown>('open');
  const [board, setBoard] = useState('');
  const [projectId, setProjectId] = useState('');
  const [cursor, setCursor] = useState<string | null>(null);
  const query = {
    limit: 50,
    ...(status !== 'all' && { status }),
    ...(projectId && { projectId }),
    ...(cursor && { cursor }),
  };
  const page = useLoad(JSON.stringify(query), () => client.get('/api/admin/feedback', { params: { query } }));
  return (
    <section class="panel feedback">
      <form class="row search" onSubmit={(e) => (e.preventDefault(), setCursor(null), setProjectId(board.trim()))}>
        <label class="field inline">
          <span>Status</span>
          <select
            name="status"
            value={status}
            onChange={(e) => (setCursor(null), setStatus((e.target as HTMLSelectElement).value as Shown))}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <input
          name="projectId"
          aria-label="Board id"
          class="grow"
          value={board}
          placeholder="board id (all boards when empty)"
          onInput={(e) => setBoard((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary">
          Filter
        </button>
      </form>
      <ErrorNote error={page.error} />
      {!page.data ? null : page.data.feedback.length ? (
        <div class="stack">
          {openFirst(page.data.feedback).map((entry) => (
            <FeedbackEntry key={entry.id} entry={entry} changed={page.reload} />
          ))}
        </div>
      ) : (
        <p class="muted">{status === 'open' ? 'No open feedback: nothing to triage.' : 'No feedback here.'}</p>
      )}
      <Pager cursor={cursor} next={page.data?.nextCursor ?? null} go={setCursor} />
    </section>
  );
}

function FeedbackEntry({ entry, changed }: { entry: Entry; changed: () => void }) {
  const act = (action: 'resolve' | 'dismiss' | 'promote') => (reason: string) =>
    client.post(`/api/admin/feedback/{id}/${action}`, { params: { path: { id: entry.id } }, body: { reason } });
  const title = entry.text.split('\n')[0]!.slice(0, 200);
  return (
    <article class="panel" aria-label={`Feedback ${entry.id}`} data-status={entry.status}>
      <div class="row small">
        <span class={`pill ${entry.status === 'open' ? 'active' : ''}`}>{entry.status}</span>
        <strong>{entry.kind}</strong>
        <span class="muted" title={entry.at}>
          {ago(entry.at)}
        </span>
        <span class="muted">
          board <strong title={entry.projectId}>{entry.boardName ?? entry.projectId}</strong>
          {entry.workId ? (
            <>
              {' '}
              about <code>{entry.workId}</code>
            </>
          ) : null}
        </span>
        <span class="muted">
          from <code>{entry.from}</code>
        </span>
      </div>
      <p style={{ whiteSpace: 'pre-wrap', margin: '0.5rem 0' }}>{entry.text}</p>
      {entry.status === 'open' ? (
        <div class="actions">
          <Guarded
            label="Resolve"
            danger={false}
            effect={
              <>The entry is marked resolved (fixed, or answered) and no longer counts against its board’s limits.</>
            }
            run={act('resolve')}
            done={changed}
          />
          <Guarded
            label="Dismiss"
            effect={
              <>The entry is dismissed and no longer counts against its board’s limits; the reason is kept with it.</>
            }
            run={act('dismiss')}
            done={changed}
          />
          <Guarded
            label="Promote"
            danger={false}
            effect={
              <>
                One item is made on the board {entry.boardName ?? entry.projectId}, titled “{title}”, labelled{' '}
                <code>feedback</code> and <code>feedback:{entry.id}</code>; the entry becomes promoted.
              </>
            }
            run={act('promote')}
            done={changed}
          />
        </div>
      ) : (
        <p class="muted small">
          {entry.status === 'promoting'
            ? 'Being promoted…'
            : `${entry.status[0]!.toUpperCase()}${entry.status.slice(1)}`}
          {entry.closedBy ? ` by ${entry.closedBy}` : ''}
          {entry.closedAt ? ` ${ago(entry.closedAt)}` : ''}
          {entry.reason ? `: ${entry.reason}` : ''}
          {entry.promotedWorkId ? (
            <>
              {' '}
              · item <code>{entry.promotedWorkId}</code>
            </>
          ) : null}
        </p>
      )}
    </article>
  );
}
