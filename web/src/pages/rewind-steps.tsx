// The Rewind section's steps and views (web/src/pages/rewind.tsx): the guided steps, a board's
// restore points, the preview's diff, and the apply behind a typed confirmation.
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client, refused } from '../api.js';
import type { Item, Status } from '../types.js';
import { ago, ErrorNote, useAction, who } from '../ui/kit.js';

/** What the server wants typed, exactly (src/board/rewind.ts REWIND_CONFIRMATION). */
export const CONFIRMATION = 'REWIND_SERVICE_BOARD';

export type RewindState = Reply<'/api/account/rewind', 'get'>;
export type Point = RewindState['points'][number];
export type Preview = NonNullable<RewindState['preview']>;

/** A preview as read, with the board's items of that moment (their titles and leases). */
export interface Previewed extends RewindState {
  preview: Preview;
  items: ReadonlyMap<string, Item>;
}

export type Applied = Reply<'/api/account/rewind', 'post'>;

export const REASON: Record<string, string> = {
  batch: 'Before a batch of new items',
  override: 'Before an operator override',
  reopen: 'Before a reopen',
  state: 'Before an operator’s state move',
  rewind: 'Before a rewind (its undo point)',
  quiet: 'After 10 quiet minutes',
};

/** `rp_<board>_<seq>[~W-n]` as a person reads it: "point #12", "point #12, W-3 and its subtree". */
export function pointLabel(id: string): string {
  const [point = id, slice] = id.split('~');
  return `point ${pointNumber(point)}${slice ? `, ${slice} and its subtree` : ''}`;
}

/** A point's board seq, `#12`: how the list and the notes name it. */
export const pointNumber = (pointId: string): string => `#${pointId.slice(pointId.lastIndexOf('_') + 1)}`;

/** `sha256:` and the first 12 hex digits: enough to tell two board states apart at a glance. */
export const shortPrint = (fingerprint: string): string => `${fingerprint.slice(0, 19)}…`;

/** The board's items now, for the titles and leases a preview names (pages followed, with a bound). */
export async function boardItems(projectId: string): Promise<Map<string, Item>> {
  const all = new Map<string, Item>();
  let after: string | null = null;
  for (let page = 0; page < 20; page++) {
    const res: Reply<'/api/items', 'get'> = await client.get('/api/items', {
      params: { query: { projectId, limit: '1000', ...(after && { after }) } },
    });
    for (const item of res.items) all.set(item.workId, item);
    after = res.next;
    if (!after) break;
  }
  return all;
}

/** Whether `workId`'s parent chain reaches `root` (the item itself included). */
export function under(items: ReadonlyMap<string, Item>, workId: string, root: string): boolean {
  for (
    let id: string | null = workId, hops = 0;
    id !== null && hops <= items.size;
    id = items.get(id)?.parentId ?? null, hops++
  )
    if (id === root) return true;
  return false;
}

/** The leases applying `previewed` ends: every one on the board, or for a slice those in its root's subtree. */
export function leasesEnding(previewed: Previewed): Item[] {
  const root = previewed.preview.restorePointId.split('~')[1];
  return [...previewed.items.values()].filter((i) => i.lease && (!root || under(previewed.items, i.workId, root)));
}

/** The guided rewind, its next step marked: pause (owners and admins), preview, apply (the owner), resume. */
export function Steps(props: {
  paused: Status | null;
  previewed: boolean;
  applied: boolean;
  owner: boolean;
  pending: boolean;
  onPause: (paused: boolean) => void;
}) {
  const { paused: status, previewed, applied, owner, pending, onPause } = props;
  const isPaused = status?.paused ?? false;
  const wasPaused = useRef(false);
  if (isPaused) wasPaused.current = true;
  const done = {
    pause: wasPaused.current,
    preview: previewed || applied,
    apply: applied,
    resume: wasPaused.current && !isPaused,
  };
  const current =
    status === null
      ? null
      : !done.pause
        ? 'pause'
        : !done.preview
          ? 'preview'
          : !done.apply
            ? 'apply'
            : !done.resume
              ? 'resume'
              : null;
  const step = (key: keyof typeof done, title: string, body: ComponentChildren) => (
    <li
      data-step={key}
      data-done={done[key] ? 'yes' : 'no'}
      aria-current={current === key ? 'step' : undefined}
      class={current === key ? 'note info' : 'note'}
    >
      <strong>
        {`${Object.keys(done).indexOf(key) + 1}. ${title}`} {done[key] ? <span class="ok-text">✓ done</span> : null}
      </strong>
      {body}
    </li>
  );
  return (
    <section aria-labelledby="rewind-steps" class="form">
      <h3 id="rewind-steps">Pause, preview, apply, resume</h3>
      <ol
        aria-label="Rewind step by step"
        style={{ display: 'grid', gap: '0.4rem', margin: 0, padding: 0, listStyle: 'none' }}
      >
        {step(
          'pause',
          'Pause the board',
          isPaused ? (
            <span data-paused-by={status!.pausedBy}>
              {`Paused by ${who(status!.pausedBy)} ${ago(status!.pausedAt)}.`} Claims and changes wait; the agents’
              leases keep running and renew.
            </span>
          ) : (
            <>
              <span>
                {done.pause
                  ? 'Paused for this rewind, and resumed since.'
                  : 'While agents work the board moves with every submit, and a preview goes stale before it can be applied. Pausing holds their claims and changes (they are answered BOARD_PAUSED) while leases, renewals, heartbeats and shouts go on.'}
              </span>
              <div class="row">
                <button type="button" onClick={() => onPause(true)} disabled={pending || status === null}>
                  {pending ? 'Pausing…' : done.pause ? 'Pause again' : 'Pause the board'}
                </button>
              </div>
            </>
          ),
        )}
        {step(
          'preview',
          'Preview a restore point',
          <span>Choose a point below: the preview lists what would come back, disappear and change.</span>,
        )}
        {step(
          'apply',
          'Apply it',
          <span>
            {owner
              ? 'Type the confirmation under the preview. Leases on replaced items end at once.'
              : 'The board’s owner applies it; as an admin you may pause, preview and resume.'}
          </span>,
        )}
        {step(
          'resume',
          'Resume the board',
          isPaused ? (
            <>
              <span>
                {applied
                  ? 'The rewind landed: let the agents carry on.'
                  : 'Resume when you are done, with or without a rewind.'}
              </span>
              <div class="row">
                <button type="button" onClick={() => onPause(false)} disabled={pending}>
                  {pending ? 'Resuming…' : 'Resume the board'}
                </button>
              </div>
            </>
          ) : (
            <span>{applied ? 'The board is running again.' : 'Agents carry on from the board as it is then.'}</span>
          ),
        )}
      </ol>
    </section>
  );
}

export function Points({
  points,
  chosen,
  onChoose,
}: {
  points: Point[];
  chosen: string | null;
  onChoose?: (id: string) => void;
}) {
  if (points.length === 0)
    return (
      <p class="muted">
        No restore points yet: one is kept before each batch, override, reopen, operator state move and rewind.
      </p>
    );
  return (
    <div class="scroll-x">
      <table class="list" aria-label="Restore points">
        <thead>
          <tr>
            <th scope="col">Point</th>
            <th scope="col">Captured</th>
            <th scope="col">Why</th>
            <th scope="col">Items</th>
            {onChoose ? (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {points.map((p) => (
            <tr
              key={p.restorePointId}
              data-point-id={p.restorePointId}
              class={chosen?.split('~')[0] === p.restorePointId ? 'chosen' : ''}
            >
              <td>
                <code title={p.restorePointId}>{pointNumber(p.restorePointId)}</code>
              </td>
              <td title={p.capturedAt}>
                {new Date(p.capturedAt).toLocaleString()} <small class="muted">({ago(p.capturedAt)})</small>
              </td>
              <td>{REASON[p.reason] ?? p.reason}</td>
              <td>{p.itemCount}</td>
              {onChoose ? (
                <td>
                  <button
                    type="button"
                    onClick={() => onChoose(p.restorePointId)}
                    aria-label={`Preview ${pointLabel(p.restorePointId)}`}
                  >
                    Preview
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What applying the previewed point would do, as three lists. */
export function Diff({ previewed }: { previewed: Previewed }) {
  const { preview, items } = previewed;
  const { added, removed, changed } = preview;
  if (!added.length && !removed.length && !changed.length) {
    return (
      <div class="note ok" role="status">
        Nothing would change: the board already matches {pointLabel(preview.restorePointId)}.
      </div>
    );
  }
  return (
    <div class="diff" aria-label="What the rewind would change">
      <DiffList title="Come back" hint="in the point, not on the board now" ids={added} kind="added" items={items} />
      <DiffList
        title="Disappear"
        hint="on the board now, not in the point"
        ids={removed}
        kind="removed"
        items={items}
      />
      <section aria-label="Changed" class="changed">
        <h3>
          Change <span class="muted">({changed.length})</span>
        </h3>
        {changed.length ? (
          <ul>
            {changed.map((c) => (
              <li key={c.workId} data-work-id={c.workId}>
                <code>{c.workId}</code> {items.get(c.workId)?.title ?? ''}
                <div class="muted">{c.fields.join(', ')}</div>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">none</p>
        )}
      </section>
    </div>
  );
}

export function DiffList({
  title,
  hint,
  ids,
  kind,
  items,
}: {
  title: string;
  hint: string;
  ids: string[];
  kind: 'added' | 'removed';
  items: ReadonlyMap<string, Item>;
}) {
  return (
    <section aria-label={kind === 'added' ? 'Added' : 'Removed'} class={kind}>
      <h3>
        {title} <span class="muted">({ids.length})</span>
      </h3>
      <small class="muted">{hint}</small>
      {ids.length ? (
        <ul>
          {ids.map((id) => (
            <li key={id} data-work-id={id}>
              <code>{id}</code> {items.get(id)?.title ?? ''}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">none</p>
      )}
    </section>
  );
}

/**
 * The apply: only what was previewed, against the fingerprint the preview read, after the owner
 * types the confirmation. A board that moved since answers REWIND_VERSION_MISMATCH: the registry's
 * message shows and the preview is read again.
 */
export function Apply(props: {
  projectId: string;
  previewed: Previewed;
  paused: boolean | null;
  onApplied: (res: Applied) => void;
  onStale: () => void;
}) {
  const target = props.previewed.preview.restorePointId;
  const leases = leasesEnding(props.previewed);
  const [typed, setTyped] = useState('');
  const apply = useAction(async () => {
    try {
      const res: Applied = await client.post('/api/account/rewind', {
        params: { query: { projectId: props.projectId } },
        body: {
          restorePointId: target,
          confirm: CONFIRMATION,
          expectedFingerprint: props.previewed.currentFingerprint,
        },
      });
      props.onApplied(res);
      return res;
    } catch (e) {
      // The board moved: what is applied must be re-read and re-confirmed, never applied on a stale yes.
      if (refused(e, 'REWIND_VERSION_MISMATCH')) {
        setTyped('');
        props.onStale();
      }
      throw e;
    }
  });
  const stale = refused(apply.error, 'REWIND_VERSION_MISMATCH');
  return (
    <form
      class="form"
      aria-busy={apply.pending}
      onSubmit={(e) => {
        e.preventDefault();
        if (typed === CONFIRMATION && !apply.pending) void apply.go();
      }}
    >
      <label class="field">
        <span>
          Type <code>{CONFIRMATION}</code> to rewind the board to {pointLabel(target)}
        </span>
        <input
          name="confirm"
          value={typed}
          autocomplete="off"
          spellcheck={false}
          onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
        />
        <small>
          {leases.length
            ? `These leases end at once: ${leases.map((i) => `${i.workId} (${who(i.lease!.holder)}, ${i.lease!.purpose})`).join(', ')}. `
            : 'No lease is held on an item this replaces. '}
          Applies only while the board still reads <code>{shortPrint(props.previewed.currentFingerprint)}</code>
        </small>
      </label>
      <ErrorNote error={apply.error} />
      {stale ? (
        <p class="muted">
          The preview above was read again against the board as it is now: check it, then type the confirmation again.
          {props.paused === false ? ' Agents are moving the board: pause it first (step 1) so the preview holds.' : ''}
        </p>
      ) : null}
      <div class="row">
        <button type="submit" class="danger" disabled={typed !== CONFIRMATION || apply.pending}>
          {apply.pending ? 'Rewinding…' : 'Rewind the board'}
        </button>
      </div>
    </form>
  );
}
