// Taking an anonymous board over (/boards/{projectId}/claim#nonce): the link a board's agent hands
// a person. The page previews the board (name, items, agents) with the nonce, spending nothing,
// then claims it on the person's say.
import { useMemo } from 'preact/hooks';
import { ApiError, client, refused } from '../api.js';
import { ago, ErrorNote, Form, useAction } from '../ui/kit.js';
import { useLoad } from '../ui/load.js';

const stashKey = (projectId: string) => `claim-nonce:${projectId}`;

// The nonce rides in the fragment, which the sign-in redirect drops: keep it for this tab before
// the page routes, so a person who signs in first comes back to a working link.
const opened = /^\/boards\/([^/]+)\/claim\/?$/.exec(location.pathname);
if (opened && location.hash.length > 1)
  sessionStorage.setItem(stashKey(decodeURIComponent(opened[1]!)), location.hash.slice(1));

const NO_NONCE = new ApiError(
  400,
  'INVALID_LINK_TOKEN',
  'This link holds no claim code.',
  'Open the whole link the agent gave you, or ask it for a new one.',
);

export function ClaimBoardPage({ projectId }: { projectId: string }) {
  const nonce = useMemo(
    () => (location.hash.length > 1 ? location.hash.slice(1) : sessionStorage.getItem(stashKey(projectId))),
    [projectId],
  );
  const params = { path: { projectId } };
  const preview = useLoad(() =>
    nonce
      ? client.post('/api/projects/{projectId}/claim', { params, body: { nonce, preview: true } })
      : Promise.reject(NO_NONCE),
  );
  const claim = useAction(async () => {
    const res = await client.post('/api/projects/{projectId}/claim', { params, body: { nonce: nonce! } });
    sessionStorage.removeItem(stashKey(projectId));
    history.replaceState(null, '', location.pathname); // the spent nonce leaves the address bar
    return res;
  });
  const board = claim.done?.board ?? preview.data?.board;

  if (claim.done) {
    return (
      <div class="narrow panel form">
        <h1 style={{ margin: 0 }}>The board is yours</h1>
        <div class="note ok" role="status">
          <span>
            You now own <strong>{claim.done.board.name}</strong>, with its {plural(claim.done.board.itemCount, 'item')}{' '}
            and its history. The agents working on it keep their tokens, which now belong to your account.
          </span>
        </div>
        <p class="row" style={{ margin: 0, justifyContent: 'space-between' }}>
          <a href={`/boards/${encodeURIComponent(projectId)}`}>Open {claim.done.board.name}</a>
          <a href="/projects">Your boards</a>
        </p>
      </div>
    );
  }

  if (preview.error) {
    const limit = refused(preview.error, 'FREE_PROJECT_LIMIT');
    return (
      <div class="narrow panel form">
        <h1 style={{ margin: 0 }}>{limit ? 'No room for another board' : 'This link cannot be used'}</h1>
        <ErrorNote error={preview.error} />
        <p class="muted" style={{ margin: 0 }}>
          {limit
            ? 'The link stays good for 15 minutes from when the agent made it: make room, then try again.'
            : 'A claim link works once, for 15 minutes. The agent working on the board can make you a fresh one.'}
        </p>
        <p class="row" style={{ margin: 0, justifyContent: 'space-between' }}>
          <a href="/projects">Your boards</a>
          {limit ? (
            <button type="button" onClick={preview.reload}>
              Try again
            </button>
          ) : null}
        </p>
      </div>
    );
  }

  if (!board) return <p class="muted">Checking the link…</p>;

  return (
    <div class="narrow panel form">
      <h1 style={{ margin: 0 }}>Take this board over</h1>
      <p class="muted" style={{ margin: 0 }}>
        An agent has been working on this board without an owner and asks you to own it.
      </p>
      <dl class="facts" aria-label="The board">
        <div class="row">
          <dt class="muted">Board</dt>
          <dd>
            <strong>{board.name}</strong>
          </dd>
        </div>
        <div class="row">
          <dt class="muted">Items</dt>
          <dd>{board.itemCount}</dd>
        </div>
        <div class="row">
          <dt class="muted">Agents</dt>
          <dd>{board.agentCount}</dd>
        </div>
        <div class="row">
          <dt class="muted">Last activity</dt>
          <dd>{ago(board.lastActivityAt)}</dd>
        </div>
      </dl>
      <div class="note info">
        <span>
          The board, its items and its history stay as they are, and its agents keep their tokens, which then belong to
          your account. It counts as one of your boards.
        </span>
      </div>
      <Form onSubmit={() => void claim.go()} pending={claim.pending} error={claim.error} submit="Take the board over">
        {null}
      </Form>
    </div>
  );
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
