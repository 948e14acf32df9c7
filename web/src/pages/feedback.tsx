// The board's feedback: what its agents reported about working on it, held for the service's
// operators. Owners and admins read it here, newest first; feedback is no board event, so the list
// is read when the section opens (and on Refresh), never pushed.
import { useEffect, useState } from 'preact/hooks';
import { client } from '../api.js';
import type { Feedback } from '../types.js';
import { ago, ErrorNote, useAction, who } from '../ui/kit.js';

const PAGE = 50;
const SHOWN = ['all', 'open', 'promoted', 'resolved', 'dismissed'] as const;

export default function FeedbackSection({ projectId, role }: { projectId: string; role: string | null }) {
  const reader = role === 'admin' || role === 'owner';
  return (
    <section class="panel entries" aria-label="Feedback">
      <div class="section-head">
        <h2>Feedback</h2>
      </div>
      <p class="muted small">
        Agents report problems, suggestions and questions about working on this board with{' '}
        <code>POST /api/feedback</code> <code>{'{"text", "kind": "problem"|"suggestion"|"question", "workId"?}'}</code>{' '}
        (at most 20 open per agent and 500 per board). The service’s operators triage it: they resolve it, dismiss it,
        or promote it into an item on this board.
      </p>
      {reader ? (
        <FeedbackList projectId={projectId} />
      ) : (
        <p class="note info" data-feedback-note>
          Only the board’s owner and admins read its feedback here.
        </p>
      )}
    </section>
  );
}

function FeedbackList({ projectId }: { projectId: string }) {
  const [shown, setShown] = useState<(typeof SHOWN)[number]>('all');
  const [entries, setEntries] = useState<Feedback[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [readAt, setReadAt] = useState<string | null>(null);
  const read = useAction(async (cursor: string | null) => {
    const page = await client.get('/api/feedback', {
      params: {
        query: { projectId, limit: String(PAGE), ...(shown !== 'all' && { status: shown }), ...(cursor && { cursor }) },
      },
    });
    setEntries((held) => (cursor && held ? [...held, ...page.feedback] : page.feedback));
    setNext(page.nextCursor);
    if (!cursor) setReadAt(new Date().toISOString());
  });
  useEffect(() => void read.go(null), [projectId, shown]);
  return (
    <>
      <div class="row">
        <label class="inline">
          <span class="muted">Show</span>
          <select
            name="feedback-status"
            value={shown}
            onChange={(e) => setShown((e.target as HTMLSelectElement).value as typeof shown)}
          >
            {SHOWN.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="button" disabled={read.pending} onClick={() => void read.go(null)}>
          {read.pending ? 'Reading…' : 'Refresh'}
        </button>
        {entries ? (
          <span class="muted">
            {entries.length}
            {next ? '+' : ''} shown
          </span>
        ) : null}
        <span class="muted small">
          Not live: feedback is no board event, so this list is as read {readAt ? ago(readAt) : 'just now'}.
        </span>
      </div>
      <ErrorNote error={read.error} />
      {entries === null ? (
        <p class="muted">Reading the feedback…</p>
      ) : entries.length === 0 ? (
        <p class="muted">
          {shown === 'all' ? 'No feedback yet: the agents have reported nothing.' : `No ${shown} feedback.`}
        </p>
      ) : (
        <ul class="feed feedback-list">
          {entries.map((f) => (
            <li key={f.id} data-feedback-id={f.id} data-status={f.status}>
              <div class="row">
                <span class={`pill s-${f.status}`}>{f.status}</span>
                <strong>{f.kind}</strong>
                <span class="muted">
                  from <span title={f.from}>{who(f.from)}</span> · {ago(f.at)}
                </span>
                {f.workId ? (
                  <span class="muted">
                    about <a href={`/boards/${projectId}/items/${f.workId}`}>{f.workId}</a>
                  </span>
                ) : null}
              </div>
              <p class="pre">{f.text}</p>
              {f.status !== 'open' ? (
                <div class="at">
                  {f.status === 'promoting'
                    ? 'being promoted by an operator'
                    : `${f.status}${f.closedBy ? ` by ${who(f.closedBy)}` : ''}${f.closedAt ? ` ${ago(f.closedAt)}` : ''}`}
                  {f.reason ? `: ${f.reason}` : ''}
                  {f.promotedWorkId ? (
                    <>
                      {' '}
                      · item <a href={`/boards/${projectId}/items/${f.promotedWorkId}`}>{f.promotedWorkId}</a>
                    </>
                  ) : null}
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {next ? (
        <button type="button" disabled={read.pending} onClick={() => void read.go(next)}>
          Older feedback
        </button>
      ) : null}
    </>
  );
}
