// The board's columns at any size: each shows its count and its most relevant cards first, a page
// at a time as it scrolls. Keyboard: one card is the tab stop; arrows move between cards and
// columns, Enter opens a card, Alt+↑/↓ (and Alt+Home) move a ready card in the chain. Operators
// also drag ready cards to reorder the chain.
import { memo } from 'preact/compat';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { sendReorder } from '../api.js';
import { moveInChain, placeInChain } from '../chain.js';
import { STATES, type State } from '../board-model.js';
import type { Card as CardData } from '../types.js';
import { Countdown, ErrorNote, who } from '../ui/kit.js';

export const STATE_LABEL: Record<State, string> = {
  pending: 'Pending',
  ready: 'Ready',
  claimed: 'Claimed',
  awaiting_verify: 'Awaiting verify',
  verifying: 'Verifying',
  done: 'Done',
  blocked: 'Blocked',
  cancelled: 'Cancelled',
};
/** Cards a column shows at first, and how many more each time it is scrolled to its end. */
export const COLUMN_PAGE = 30;

interface Focus {
  state: State;
  workId: string;
}

interface Drop {
  target: string;
  after: boolean;
}

export function Columns({
  projectId,
  columns,
  canReorder,
}: {
  projectId: string;
  columns: ReadonlyMap<State, readonly CardData[]>;
  canReorder: boolean;
}) {
  const [shown, setShown] = useState<Record<string, number>>({});
  const [focus, setFocus] = useState<Focus | null>(null);
  const [drop, setDrop] = useState<Drop | null>(null);
  const [error, setError] = useState<unknown>(null);
  const root = useRef<HTMLDivElement>(null);
  /** The card to focus once the next render has placed it (after a key moved focus or the chain). */
  const refocus = useRef<string | null>(null);
  const dragged = useRef<string | null>(null);
  // What the drag handlers read when called (they are made once, so the memoised columns keep them).
  const live = useRef({ columns, drop });
  live.current = { columns, drop };
  const limit = (st: State) => shown[st] ?? COLUMN_PAGE;
  const more = useCallback(
    (st: State, atLeast = 0) =>
      setShown((s) => ({ ...s, [st]: Math.max((s[st] ?? COLUMN_PAGE) + COLUMN_PAGE, atLeast) })),
    [],
  );
  const focused = useCallback((state: State, workId: string) => setFocus({ state, workId }), []);

  // The tab stop: the focused card while it is still in its column, else the first card shown.
  const current =
    focus && columns.get(focus.state)?.some((c) => c.workId === focus.workId) ? focus : firstCard(columns);
  useLayoutEffect(() => {
    const id = refocus.current;
    if (!id) return;
    const el = root.current?.querySelector<HTMLElement>(`a.card[data-work-id="${id}"]`);
    if (el) {
      refocus.current = null;
      if (document.activeElement !== el) el.focus();
    }
  });

  const reorder = useCallback(
    async (workIds: string[] | null, keep: string) => {
      if (!workIds) return;
      setError(null);
      refocus.current = keep;
      try {
        await sendReorder(projectId, workIds);
      } catch (e) {
        setError(e);
      }
    },
    [projectId],
  );

  const onKey = (e: KeyboardEvent) => {
    const el = (e.target as HTMLElement).closest<HTMLElement>('a.card');
    if (!el) return;
    const state = el.dataset.state as State;
    const workId = el.dataset.workId!;
    const list = columns.get(state) ?? [];
    const at = list.findIndex((c) => c.workId === workId);
    const go = (st: State, i: number) => {
      const cards = columns.get(st) ?? [];
      const target = cards[Math.max(0, Math.min(i, cards.length - 1))];
      if (!target) return;
      if (i >= limit(st)) more(st, i + 1);
      setFocus({ state: st, workId: target.workId });
      refocus.current = target.workId;
    };
    if (e.altKey && state === 'ready' && canReorder && ['ArrowUp', 'ArrowDown', 'Home'].includes(e.key)) {
      e.preventDefault();
      const to =
        e.key === 'Home'
          ? list[0]?.workId === workId
            ? null
            : [workId]
          : moveInChain(list, workId, e.key === 'ArrowUp' ? -1 : 1);
      void reorder(to, workId);
      return;
    }
    const step: Record<string, () => void> = {
      ArrowDown: () => go(state, at + 1),
      ArrowUp: () => go(state, at - 1),
      Home: () => go(state, 0),
      End: () => go(state, limit(state) - 1),
      ArrowRight: () => neighbour(columns, state, 1) && go(neighbour(columns, state, 1)!, at),
      ArrowLeft: () => neighbour(columns, state, -1) && go(neighbour(columns, state, -1)!, at),
    };
    if (!step[e.key] || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    step[e.key]!();
  };

  const drag = useMemo<DragHandlers>(
    () => ({
      start: (e: DragEvent, workId: string) => {
        dragged.current = workId;
        e.dataTransfer?.setData('text/plain', workId);
        if (e.dataTransfer) e.dataTransfer.effectAllowed = 'move';
      },
      over: (e: DragEvent, workId: string) => {
        if (!dragged.current) return;
        e.preventDefault();
        const box = (e.currentTarget as HTMLElement).getBoundingClientRect();
        const after = e.clientY > box.top + box.height / 2;
        const held = live.current.drop;
        if (held?.target !== workId || held.after !== after) setDrop({ target: workId, after });
      },
      drop: (e: DragEvent) => {
        e.preventDefault();
        const moved = dragged.current;
        const { columns: now, drop: at } = live.current;
        dragged.current = null;
        setDrop(null);
        if (moved && at) void reorder(placeInChain(now.get('ready') ?? [], moved, at.target, at.after), moved);
      },
      end: () => {
        dragged.current = null;
        setDrop(null);
      },
    }),
    [reorder],
  );

  return (
    <>
      <ErrorNote error={error} />
      <p class="muted keys" id="board-keys">
        Keys: arrows move between cards · Enter opens one
        {canReorder ? ' · Alt+↑/↓ or drag moves a ready card in the chain, Alt+Home to its head' : ''}
      </p>
      <div class="columns" ref={root} onKeyDown={onKey} aria-describedby="board-keys">
        {STATES.map((state) => (
          <Column
            key={state}
            projectId={projectId}
            state={state}
            cards={columns.get(state) ?? []}
            limit={limit(state)}
            onMore={more}
            tabStop={current?.state === state ? current.workId : null}
            drag={state === 'ready' && canReorder ? drag : null}
            drop={state === 'ready' ? drop : null}
            onFocusCard={focused}
          />
        ))}
      </div>
    </>
  );
}

const firstCard = (columns: ReadonlyMap<State, readonly CardData[]>): Focus | null => {
  for (const state of STATES) {
    const first = columns.get(state)?.[0];
    if (first) return { state, workId: first.workId };
  }
  return null;
};

/** The nearest column with cards to the left (-1) or right (1). */
function neighbour(columns: ReadonlyMap<State, readonly CardData[]>, from: State, by: -1 | 1): State | null {
  for (let i = STATES.indexOf(from) + by; i >= 0 && i < STATES.length; i += by)
    if (columns.get(STATES[i]!)?.length) return STATES[i]!;
  return null;
}

type DragHandlers = {
  start(e: DragEvent, workId: string): void;
  over(e: DragEvent, workId: string): void;
  drop(e: DragEvent): void;
  end(): void;
};

interface ColumnProps {
  projectId: string;
  state: State;
  cards: readonly CardData[];
  limit: number;
  onMore: (state: State) => void;
  tabStop: string | null;
  drag: DragHandlers | null;
  drop: Drop | null;
  onFocusCard: (state: State, workId: string) => void;
}

/** One column: its count, then its first `limit` cards; reaching the end of what is shown shows more. */
const Column = memo(function Column({
  projectId,
  state,
  cards,
  limit,
  onMore,
  tabStop,
  drag,
  drop,
  onFocusCard,
}: ColumnProps) {
  const list = useRef<HTMLDivElement>(null);
  const end = useRef<HTMLDivElement>(null);
  const hasMore = cards.length > limit;
  useEffect(() => {
    if (!hasMore || !end.current) return;
    const seen = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && onMore(state), {
      root: list.current,
      rootMargin: '200px',
    });
    seen.observe(end.current);
    return () => seen.disconnect();
  }, [hasMore, limit]);
  return (
    <section class="column" aria-label={STATE_LABEL[state]} data-state={state}>
      <h2>
        <span>
          <span class={`swatch state-${state}`} aria-hidden="true" />
          {STATE_LABEL[state]}
        </span>
        <span class="count" data-count={cards.length}>
          {cards.length.toLocaleString()}
        </span>
      </h2>
      <div class="column-cards" ref={list}>
        {cards.slice(0, limit).map((card) => (
          <Card
            key={card.workId}
            projectId={projectId}
            card={card}
            tabStop={card.workId === tabStop}
            drag={drag}
            drop={drop?.target === card.workId ? (drop.after ? 'after' : 'before') : null}
            onFocusCard={onFocusCard}
          />
        ))}
        {hasMore ? (
          <div class="more muted" ref={end} data-more>
            {limit} of {cards.length.toLocaleString()} shown; scroll for more
          </div>
        ) : null}
      </div>
    </section>
  );
});

interface CardProps {
  projectId: string;
  card: CardData;
  tabStop: boolean;
  drag: DragHandlers | null;
  drop: 'before' | 'after' | null;
  onFocusCard: (state: State, workId: string) => void;
}

const Card = memo(function Card({ projectId, card: item, tabStop, drag, drop, onFocusCard }: CardProps) {
  const last = item.verifications.at(-1)?.verdict;
  const gate =
    item.verify === 'required'
      ? last === 'pass'
        ? 'verified'
        : last === 'fail'
          ? 'failed verify'
          : 'verify required'
      : null;
  return (
    <a
      class={`card p${item.priority}${drop ? ` drop-${drop}` : ''}`}
      href={`/boards/${projectId}/items/${item.workId}`}
      data-work-id={item.workId}
      data-state={item.state}
      tabIndex={tabStop ? 0 : -1}
      draggable={drag ? true : undefined}
      onFocus={() => onFocusCard(item.state as State, item.workId)}
      onDragStart={drag ? (e) => drag.start(e, item.workId) : undefined}
      onDragOver={drag ? (e) => drag.over(e, item.workId) : undefined}
      onDrop={drag ? (e) => drag.drop(e) : undefined}
      onDragEnd={drag ? () => drag.end() : undefined}
    >
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
});
