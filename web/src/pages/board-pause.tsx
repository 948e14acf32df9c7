// A paused board on its page: whether it is paused, by whom and since when, and the banner that
// says so (with resume for those who may).
import { useEffect, useState } from 'preact/hooks';
import { client } from '../api.js';
import { BoardModel } from '../board-model.js';
import { ago, ErrorNote, useAction, who } from '../ui/kit.js';

export interface Pause {
  by: string;
  at: string;
}

/**
 * Whether the board is paused, by whom and since when: read from the status when the page loads
 * (and again after a reload of the board), then kept by the board.paused and board.resumed events.
 */
export function usePause(model: BoardModel, projectId: string): Pause | null {
  const [pause, setPause] = useState<Pause | null>(null);
  useEffect(() => {
    let live = true;
    const read = () =>
      void client.get('/api/status', { params: { query: { projectId } } }).then(
        (s) => live && setPause(s.paused && s.pausedBy && s.pausedAt ? { by: s.pausedBy, at: s.pausedAt } : null),
        () => undefined, // the board's own error note shows a board that cannot be read
      );
    read();
    const stop = model.listen((e) => {
      if (e === null) read();
      else if (e.type === 'board.paused') setPause({ by: e.actor, at: e.at });
      else if (e.type === 'board.resumed') setPause(null);
    });
    return () => ((live = false), stop());
  }, [model, projectId]);
  return pause;
}

/**
 * A paused board says so while it is: who paused it, since when, what waits and what goes on; owners
 * and admins resume it here (New items is disabled meanwhile).
 */
export function PausedBanner({
  pause,
  projectId,
  operator,
}: {
  pause: Pause | null;
  projectId: string;
  operator: boolean;
}) {
  const resume = useAction(() =>
    client.patch('/api/projects/{projectId}', { params: { path: { projectId } }, body: { paused: false } }),
  );
  if (!pause) return null;
  return (
    <div class="note warn paused-banner" role="status" data-paused>
      <span class="grow">
        <strong>Paused</strong> by {who(pause.by)} {ago(pause.at)}: claims and changes to items wait; leases keep
        running, and renewals, releases, shouts and reads go on.
      </span>
      {operator ? (
        <>
          <a href={`/account/rewind?projectId=${encodeURIComponent(projectId)}`}>Rewind…</a>
          <button type="button" disabled={resume.pending} onClick={() => void resume.go()}>
            {resume.pending ? 'Resuming…' : 'Resume'}
          </button>
        </>
      ) : null}
      <ErrorNote error={resume.error} />
    </div>
  );
}
