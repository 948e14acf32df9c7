// The account's Rewind section (Pro): a guided pause, preview, apply, resume; a board's restore
// points, the preview of applying one (or one item's subtree of it), and the apply behind a typed
// confirmation, with its undo. A Free board is shown the points it keeps and what Pro would restore.
import { useEffect, useRef, useState } from 'preact/hooks';
import { client, refused } from '../api.js';
import type { Item, ProjectSummary } from '../types.js';
import { BoardPicker, ErrorNote, useAction, who } from '../ui/kit.js';
import { queryParam } from '../router.js';
import { allProjects, useLoad } from '../ui/load.js';
import { refuse } from './recovery.js';
import {
  Apply,
  boardItems,
  Diff,
  pointLabel,
  pointNumber,
  shortPrint,
  Points,
  Steps,
  type Applied,
  type Point,
  type Previewed,
  type RewindState,
} from './rewind-steps.js';

const SLICE_ROOT = /^W-\d{1,9}$/;

export function RewindSection() {
  const projects = useLoad(allProjects);
  const boards = (projects.data ?? []).filter((p: ProjectSummary) => p.role === 'owner' || p.role === 'admin');
  // The board's notice links here with ?projectId= so the board it came from is the one shown.
  const [projectId, setProjectId] = useState<string | null>(queryParam('projectId'));
  useEffect(() => {
    if (projects.data && !boards.some((p) => p.projectId === projectId) && boards[0]) setProjectId(boards[0].projectId);
  }, [projects.data]);
  const board = boards.find((p) => p.projectId === projectId);
  return (
    <section class="panel form" aria-labelledby="rewind">
      <h2 id="rewind">Rewind</h2>
      <p class="muted" style={{ margin: 0 }}>
        Put a board’s work graph back as it was at a restore point. Leases on replaced items end; shouts and history
        stay. A rewind can itself be undone.
      </p>
      <ErrorNote error={projects.error} />
      {projects.data && boards.length === 0 ? (
        <p class="muted">You own or administer no board: rewind is for owners and admins.</p>
      ) : null}
      <BoardPicker name="rewind-board" boards={boards} value={projectId} onChange={setProjectId} />
      {board ? (
        <BoardRewind
          projectId={board.projectId}
          name={board.name}
          owner={board.role === 'owner'}
          key={board.projectId}
        />
      ) : null}
    </section>
  );
}

function BoardRewind({ projectId, name, owner }: { projectId: string; name: string; owner: boolean }) {
  const read = (restorePointId?: string): Promise<RewindState> =>
    client.get('/api/account/rewind', { params: { query: { projectId, ...(restorePointId && { restorePointId }) } } });
  const state = useLoad(() => read());
  const status = useLoad(() => client.get('/api/status', { params: { query: { projectId } } }));
  const setPaused = useAction(async (paused: boolean) => {
    await client.patch('/api/projects/{projectId}', { params: { path: { projectId } }, body: { paused } });
    status.reload();
  });
  const [chosen, setChosen] = useState<string | null>(null);
  const [sliceRoot, setSliceRoot] = useState('');
  // The last preview read: kept while it is read again, so the apply's error stays beside it.
  const [shown, setShown] = useState<Previewed | null>(null);
  const [applied, setApplied] = useState<Applied | null>(null);
  const preview = useAction(async (id: string) => {
    const root = id.split('~')[1];
    if (root !== undefined && !SLICE_ROOT.test(root))
      throw refuse(
        'INVALID_REWIND_POINT',
        `“${root}” is not a work id.`,
        'Type a work id such as W-12, or leave it empty for the whole board.',
      );
    // The titles are a help, not the preview: a board that cannot be listed still previews.
    const [answer, items] = await Promise.all([read(id), boardItems(projectId).catch(() => new Map<string, Item>())]);
    const next: Previewed = { ...answer, preview: answer.preview!, items };
    setShown(next);
    state.reload();
    return next;
  });
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [chosen]);
  const choose = (pointId: string) => {
    setChosen(pointId);
    setSliceRoot('');
    setShown(null);
    void preview.go(pointId);
  };
  const previewChosen = () => {
    const root = sliceRoot.trim().toUpperCase();
    setShown(null);
    void preview.go(root ? `${chosen}~${root}` : chosen!);
  };

  if (refused(state.error, 'BILLING_PRO_REQUIRED'))
    return <ProNote owner={owner} points={(state.error.details?.points as Point[] | undefined) ?? []} />;
  const s = state.data;
  if (!s) return state.error ? <ErrorNote error={state.error} /> : <p class="muted">Loading restore points…</p>;
  const target = shown?.preview;
  const paused = status.data?.paused ?? null;
  return (
    <>
      <dl class="facts">
        <div class="row">
          <dt class="muted">Board</dt>
          <dd>
            <a href={`/boards/${projectId}`}>{name}</a>{' '}
            {owner ? null : <span class="muted">(you are admin: you may preview, the owner applies)</span>}
          </dd>
        </div>
        <div class="row">
          <dt class="muted">Fingerprint now</dt>
          <dd>
            <code title={s.currentFingerprint} data-fingerprint={s.currentFingerprint}>
              {shortPrint(s.currentFingerprint)}
            </code>
          </dd>
        </div>
      </dl>
      <Steps
        paused={status.data}
        previewed={shown !== null}
        applied={applied !== null}
        owner={owner}
        pending={setPaused.pending}
        onPause={(p) => void setPaused.go(p)}
      />
      <ErrorNote error={setPaused.error ?? status.error} />
      <ErrorNote error={state.error} />
      {applied ? <Rewound applied={applied} onUndo={() => choose(applied.undoPointId)} /> : null}
      <Points points={s.points} chosen={chosen} onChoose={choose} />
      {chosen ? (
        <section class="panel form" aria-labelledby="rewind-preview">
          <h2 id="rewind-preview" ref={heading} tabIndex={-1}>
            Preview: {pointLabel(target?.restorePointId ?? chosen)}
          </h2>
          <form
            class="row"
            style={{ alignItems: 'end' }}
            onSubmit={(e) => {
              e.preventDefault();
              previewChosen();
            }}
          >
            <label class="field grow">
              <span>Only this item and its subtree (optional)</span>
              <input
                name="slice"
                value={sliceRoot}
                placeholder="W-12"
                autocomplete="off"
                onInput={(e) => setSliceRoot((e.target as HTMLInputElement).value)}
              />
            </label>
            <button type="submit" disabled={preview.pending}>
              {preview.pending ? 'Previewing…' : 'Preview'}
            </button>
          </form>
          <ErrorNote error={preview.error} />
          {!target && preview.pending ? <p class="muted">Comparing the point with the board…</p> : null}
          {shown ? <Diff previewed={shown} /> : null}
          {target && owner ? (
            <Apply
              key={target.restorePointId}
              projectId={projectId}
              previewed={shown!}
              paused={paused}
              onStale={() => void preview.go(target.restorePointId)}
              onApplied={(res) => {
                setApplied(res);
                setChosen(null);
                setShown(null);
                state.reload();
                status.reload();
              }}
            />
          ) : null}
          {target && !owner ? (
            <p class="muted">Only the board’s owner can apply a rewind; as an admin you may preview.</p>
          ) : null}
        </section>
      ) : null}
    </>
  );
}

/** The last rewind applied here: where the board went, the leases it ended, and its undo. */
function Rewound({ applied, onUndo }: { applied: Applied; onUndo: () => void }) {
  const leases = applied.revokedLeases;
  return (
    <div class="note ok" role="status">
      <strong>Rewound to {pointLabel(applied.restorePointId)}.</strong>
      <span>
        The board now reads <code>{shortPrint(applied.fingerprint)}</code>; the graph it replaced is kept as undo point{' '}
        {pointNumber(applied.undoPointId)} (<code data-undo-point={applied.undoPointId}>{applied.undoPointId}</code>).
      </span>
      <span>
        {leases.length
          ? `Leases ended: ${leases.map((l) => `${l.workId} (${who(l.holder)}, ${l.purpose})`).join(', ')}.`
          : 'No lease was held on a replaced item.'}
      </span>
      <div class="row">
        <button type="button" onClick={onUndo}>
          Undo this rewind
        </button>
      </div>
    </div>
  );
}

function ProNote({ owner, points }: { owner: boolean; points: Point[] }) {
  return (
    <>
      <div class="note info" role="note">
        <strong>Rewind is a Pro feature.</strong>
        <span>
          This board is on the Free plan. It keeps its newest 20 restore points of the last 24 hours all the same, so a
          board made Pro after a mishap can still be put back.{' '}
          {owner ? (
            <>
              Upgrade it in <a href="/account/billing">Billing</a> to restore one.
            </>
          ) : (
            'Ask its owner to upgrade it to Pro to restore one.'
          )}
        </span>
      </div>
      <section aria-labelledby="rewind-free-points">
        <h3 id="rewind-free-points">What Pro would restore</h3>
        <p class="muted">
          With Pro, the board could go back to any of these points: the work graph as it stood then (leases on replaced
          items end).
        </p>
        <Points points={points} chosen={null} />
      </section>
    </>
  );
}
