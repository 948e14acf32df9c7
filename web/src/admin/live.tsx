// Live: the firehose (docs/operators.md#live-view): every board's events as they commit, newest
// on top, narrowed by board, by an account's boards, or by event type (prefixes end with a dot).
// Paused, the feed keeps listening and holds what arrives; resuming shows it. Boards show by name
// with their owner's address (many are called "My board"), agents by their tokens' names, events in
// words with their raw names beside (what the type filter takes); ids on hover.
import { useEffect, useRef, useState } from 'preact/hooks';
import { client } from '../api.js';
import { ErrorNote } from '../ui/kit.js';
import { Action, clock } from './shared.js';

interface Frame {
  boardId: string;
  /** Null until the server has read the board's name. */
  boardName: string | null;
  /** The owning account's address, read with the name. */
  ownerEmail?: string | null;
  seq: number;
  event: {
    type: string;
    actor: string;
    /** The agent's token name (a person's display name), once the server has read it. */
    actorName?: string;
    workId: string | null;
    at: string;
    data: Record<string, unknown>;
  };
}

interface BoardLabel {
  name: string;
  ownerEmail: string | null;
}

interface Filter {
  boards?: string[];
  types?: string[];
}

const KEEP = 500;
const RETRY_MS = [500, 1000, 2000, 5000, 10_000];
/** The server takes at most 50 boards and 20 types in one filter (src/ws/protocol.ts). */
const MAX_BOARDS = 50;
const MAX_TYPES = 20;

type State = 'connecting' | 'live' | 'reconnecting';

function useFirehose(filter: Filter, paused: boolean) {
  const [rows, setRows] = useState<Frame[]>([]);
  const [held, setHeld] = useState<Frame[]>([]);
  const [dropped, setDropped] = useState(0);
  const [state, setState] = useState<State>('connecting');
  const [error, setError] = useState<string | null>(null);
  const socket = useRef<WebSocket | null>(null);
  /** Board and actor names as frames carried them: earlier rows show a name too once one frame did. */
  const names = useRef(new Map<string, BoardLabel>());
  const actors = useRef(new Map<string, string>());
  const pausedRef = useRef(paused);
  const filterRef = useRef(filter);
  pausedRef.current = paused;
  filterRef.current = filter;

  const subscribe = (ws: WebSocket) =>
    ws.send(JSON.stringify({ type: 'subscribe', topics: ['firehose'], ...filterRef.current }));

  useEffect(() => {
    let stopped = false;
    let attempts = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const open = () => {
      const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws`);
      socket.current = ws;
      ws.onopen = () => subscribe(ws);
      ws.onmessage = (m) => {
        const msg = JSON.parse(String(m.data)) as {
          type: string;
          count?: number;
          message?: string;
          code?: string;
        } & Partial<Frame>;
        if (msg.type === 'subscribed') {
          attempts = 0;
          setState('live');
          setError(null);
        } else if (msg.type === 'firehose') {
          const frame = msg as Frame;
          if (frame.boardName)
            names.current.set(frame.boardId, { name: frame.boardName, ownerEmail: frame.ownerEmail ?? null });
          if (frame.event.actorName) actors.current.set(frame.event.actor, frame.event.actorName);
          const add = (list: Frame[]) => [frame, ...list].slice(0, KEEP);
          if (pausedRef.current) setHeld(add);
          else setRows(add);
        } else if (msg.type === 'firehose.dropped') setDropped((d) => d + (msg.count ?? 0));
        else if (msg.type === 'error') setError(`${msg.code ?? 'ERROR'}: ${msg.message ?? ''}`);
      };
      ws.onclose = () => {
        if (stopped) return;
        setState('reconnecting');
        timer = setTimeout(open, RETRY_MS[Math.min(attempts++, RETRY_MS.length - 1)]);
      };
    };
    open();
    return () => {
      stopped = true;
      clearTimeout(timer);
      socket.current?.close();
    };
  }, []);

  // A changed filter is sent again on the same socket: the server narrows the firehose anew.
  const key = JSON.stringify(filter);
  useEffect(() => {
    const ws = socket.current;
    if (ws?.readyState === WebSocket.OPEN) subscribe(ws);
  }, [key]);

  // Resuming shows what arrived meanwhile.
  useEffect(() => {
    if (!paused && held.length) {
      setRows((list) => [...held, ...list].slice(0, KEEP));
      setHeld([]);
    }
  }, [paused]);

  return {
    rows,
    held: held.length,
    dropped,
    state,
    error,
    boardOf: (boardId: string) => names.current.get(boardId) ?? null,
    actorOf: (actor: string) => actors.current.get(actor) ?? null,
    clear: () => (setRows([]), setHeld([]), setDropped(0)),
  };
}

const list = (text: string): string[] =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** An actor as a row shows it: an agent (⚙) or a person (👤), by name when the server gave one, else a short id. */
const actorLabel = (actor: string, name: string | null): string => {
  const mark = actor.startsWith('agent:') ? '⚙ ' : actor.startsWith('user:') ? '👤 ' : '';
  return `${mark}${name ?? actor.replace(/^(agent|user):/, '').slice(0, 15)}`;
};

/** The kind of an event, for its colour: lease.granted → lease. */
const kind = (type: string): string => type.split('.')[0] ?? type;

function summary(e: Frame['event']): string {
  const d = e.data as { from?: unknown; to?: unknown; title?: unknown; reason?: unknown };
  const parts: string[] = [];
  if (typeof d.title === 'string') parts.push(`“${d.title.slice(0, 80)}”`);
  if (typeof d.from === 'string' && typeof d.to === 'string') parts.push(`${d.from} → ${d.to}`);
  if (typeof d.reason === 'string') parts.push(d.reason.slice(0, 80));
  return parts.join(' ');
}

export function LiveSection() {
  const [boards, setBoards] = useState('');
  const [types, setTypes] = useState('');
  const [account, setAccount] = useState('');
  const [accountBoards, setAccountBoards] = useState<{ label: string; ids: string[] } | null>(null);
  const [lookupError, setLookupError] = useState<unknown>(null);
  const [filter, setFilter] = useState<Filter>({});
  const [paused, setPaused] = useState(false);
  const feed = useFirehose(filter, paused);

  const apply = async (e: Event) => {
    e.preventDefault();
    setLookupError(null);
    let ids = list(boards);
    let fromAccount = null as { label: string; ids: string[] } | null;
    if (account.trim()) {
      try {
        const found = await client.get('/api/admin/users', { params: { query: { q: account.trim(), limit: 2 } } });
        const user =
          found.users.find((u) => u.id === account.trim() || u.email.toLowerCase() === account.trim().toLowerCase()) ??
          (found.users.length === 1 ? found.users[0] : undefined);
        if (!user)
          throw new Error(
            found.users.length
              ? `“${account}” matches several accounts: give the full email or the id.`
              : `No account matches “${account}”.`,
          );
        const detail = await client.get('/api/admin/users/{userId}', { params: { path: { userId: user.id } } });
        fromAccount = { label: user.email, ids: detail.boards.map((b) => b.projectId) };
        if (!fromAccount.ids.length) throw new Error(`${user.email} has no boards.`);
        ids = [...new Set([...ids, ...fromAccount.ids])];
      } catch (err) {
        setLookupError(err);
        return;
      }
    }
    setAccountBoards(fromAccount);
    const t = list(types);
    setFilter({
      ...(ids.length && { boards: ids.slice(0, MAX_BOARDS) }),
      ...(t.length && { types: t.slice(0, MAX_TYPES) }),
    });
  };

  const narrowed = [
    filter.boards &&
      `${filter.boards.length} board${filter.boards.length > 1 ? 's' : ''}${accountBoards ? ` (${accountBoards.label})` : ''}`,
    filter.types && `types ${filter.types.join(', ')}`,
  ]
    .filter(Boolean)
    .join(' · ');

  return (
    <section class="live" data-state={feed.state}>
      <form class="filters" onSubmit={(e) => void apply(e)}>
        <label class="field">
          <span>Boards</span>
          <input
            name="boards"
            value={boards}
            placeholder="board ids, comma separated"
            onInput={(e) => setBoards((e.target as HTMLInputElement).value)}
          />
        </label>
        <label class="field">
          <span>Account</span>
          <input
            name="account"
            value={account}
            placeholder="email or account id"
            onInput={(e) => setAccount((e.target as HTMLInputElement).value)}
          />
        </label>
        <label class="field">
          <span>Event types</span>
          <input
            name="types"
            value={types}
            placeholder="item.created, lease."
            onInput={(e) => setTypes((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="primary">
          Apply
        </button>
        <button
          type="button"
          onClick={() => (setBoards(''), setAccount(''), setTypes(''), setAccountBoards(null), setFilter({}))}
        >
          Clear filter
        </button>
      </form>
      <ErrorNote error={lookupError} />
      {accountBoards && accountBoards.ids.length > MAX_BOARDS ? (
        <p class="note info">
          Only the first {MAX_BOARDS} of the account’s {accountBoards.ids.length} boards are watched.
        </p>
      ) : null}
      <div class="feedbar">
        <span class={`conn ${feed.state}`}>{feed.state}</span>
        <span class="muted">{narrowed || 'all boards, all events'}</span>
        <span class="spacer" />
        <span class="muted" title="Events the server left out to keep to 200 a second">
          dropped {feed.dropped.toLocaleString('en')}
        </span>
        <span class="muted">{feed.rows.length} shown</span>
        <button type="button" class={paused ? 'primary' : ''} aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? `Resume${feed.held ? ` (${feed.held} new)` : ''}` : 'Pause'}
        </button>
        <button type="button" onClick={feed.clear}>
          Clear
        </button>
      </div>
      {feed.error ? (
        <div class="note error" role="alert">
          {feed.error}
        </div>
      ) : null}
      <div class="firehose" role="log" aria-label="Firehose" aria-live="off">
        {feed.rows.length === 0 ? (
          <p class="muted empty">{feed.state === 'live' ? 'Waiting for events…' : 'Connecting…'}</p>
        ) : (
          <table class="list dense mono">
            <thead>
              <tr>
                <th>time (UTC)</th>
                <th>board</th>
                <th class="num">seq</th>
                <th>event</th>
                <th>item</th>
                <th>actor</th>
                <th>detail</th>
              </tr>
            </thead>
            <tbody>
              {feed.rows.map((r) => {
                const board = feed.boardOf(r.boardId);
                const label = board ? `${board.name}${board.ownerEmail ? ` · ${board.ownerEmail}` : ''}` : null;
                return (
                  <tr key={`${r.boardId}:${r.seq}`} data-board={r.boardId} data-seq={r.seq}>
                    <td class="at">{clock(r.event.at)}</td>
                    <td>
                      <button
                        type="button"
                        class="link board-name"
                        title={`Watch only ${label ? `${label} (${r.boardId})` : r.boardId}`}
                        onClick={() => (setBoards(r.boardId), setFilter({ ...filter, boards: [r.boardId] }))}
                      >
                        {board?.name ?? r.boardId.slice(0, 10)}
                      </button>
                      {board?.ownerEmail ? <span class="muted owner"> {board.ownerEmail}</span> : null}
                    </td>
                    <td class="num">{r.seq}</td>
                    <td class="event">
                      <Action name={r.event.type} class={`etype k-${kind(r.event.type)}`} />
                    </td>
                    <td>{r.event.workId ?? ''}</td>
                    <td class="actor" title={r.event.actor}>
                      {actorLabel(r.event.actor, feed.actorOf(r.event.actor))}
                    </td>
                    <td class="detail">{summary(r.event)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}
