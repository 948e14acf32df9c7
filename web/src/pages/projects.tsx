// The boards a person can open: summaries (counts, agents, last activity, role, starred), create,
// rename, delete, star as default, each board's members page, and cursor paging.
import { useEffect, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import { me, signedIn } from '../session.js';
import type { ProjectSummary } from '../types.js';
import { ago, ConfirmButton, ErrorNote, Field, Form, useAction } from '../ui/kit.js';
import { pendingInvitation } from './invitation.js';

type Page = Reply<'/api/projects', 'get'>;

const PAGE = 25;

export function ProjectsPage() {
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<Page | null>(null);
  const load = useAction(async (cursor?: string) => {
    const res = await client.get('/api/projects', { params: { query: { limit: String(PAGE), cursor } } });
    setPage(res);
    return res;
  });
  const reload = () => void load.go(cursors.at(-1));
  useEffect(reload, [cursors]);

  const [name, setName] = useState('');
  const create = useAction(async () => {
    await client.post('/api/projects', { body: { name: name.trim() } });
    setName('');
    reload();
    return `Board “${name.trim()}” created.`;
  });

  return (
    <>
      <div class="row">
        <h1 class="grow">Your boards</h1>
      </div>
      <InvitationReminder />
      <ErrorNote error={load.error} />
      <div class="scroll-x">
        <table class="list">
          <thead>
            <tr>
              <th>Board</th>
              <th>Items</th>
              <th>Awaiting verify</th>
              <th>Blocked</th>
              <th>Agents</th>
              <th>Last activity</th>
              <th>Role</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {page?.projects.map((p) => (
              <ProjectRow key={p.projectId} project={p} changed={reload} />
            ))}
          </tbody>
        </table>
      </div>
      {page && page.projects.length === 0 ? <p class="muted">No boards yet: create one below.</p> : null}
      <div class="row" style={{ marginTop: '0.5rem' }}>
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous
        </button>
        <button
          type="button"
          disabled={!page?.pagination.nextCursor}
          onClick={() => setCursors([...cursors, page!.pagination.nextCursor!])}
        >
          Next
        </button>
        {page?.pagination.cursorReset ? <span class="muted">The list changed; showing the first page.</span> : null}
      </div>
      <section class="panel" style={{ marginTop: '1rem', maxWidth: '480px' }}>
        <h2>New board</h2>
        <Form
          onSubmit={() => void create.go()}
          pending={create.pending}
          error={create.error}
          submit="Create board"
          success={create.done}
        >
          <Field label="Board name" name="board-name" value={name} onInput={setName} required maxLength={80} />
        </Form>
      </section>
    </>
  );
}

/** An invitation link opened in this tab before signing up or in: the way back to it. */
function InvitationReminder() {
  const link = pendingInvitation();
  if (!link) return null;
  return (
    <div class="note info notice" role="status">
      <span>You opened an invitation to a board in this tab and have not accepted it yet.</span>
      <a href={`/invitations/${link.invitationId}`}>Continue to the invitation</a>
    </div>
  );
}

function ProjectRow({ project, changed }: { project: ProjectSummary; changed: () => void }) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(project.name);
  const rename = useAction(async () => {
    await client.patch('/api/projects/{projectId}', {
      params: { path: { projectId: project.projectId } },
      body: { name: name.trim() },
    });
    setRenaming(false);
    changed();
  });
  const remove = useAction(async () => {
    await client.delete('/api/projects/{projectId}', { params: { path: { projectId: project.projectId } } });
    changed();
  });
  const star = useAction(async () => {
    const res = await client.patch('/api/account/profile', { body: { defaultProjectId: project.projectId } });
    if (me.value) signedIn({ ...me.value, displayName: res.displayName, defaultProjectId: res.defaultProjectId });
    changed();
  });
  return (
    <tr>
      <td class="name">
        {renaming ? (
          <form class="row" onSubmit={(e) => (e.preventDefault(), void rename.go())}>
            <input
              aria-label="New name"
              value={name}
              maxLength={80}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
            <button type="submit" class="primary" disabled={rename.pending}>
              Save
            </button>
            <button type="button" onClick={() => setRenaming(false)}>
              Cancel
            </button>
          </form>
        ) : (
          <a href={`/boards/${project.projectId}`}>
            {project.starred ? '★ ' : ''}
            {project.name}
          </a>
        )}
        <ErrorNote error={rename.error ?? remove.error ?? star.error} />
      </td>
      <td>{project.itemCount}</td>
      <td>{project.verifyCount}</td>
      <td>{project.blockedCount}</td>
      <td>{project.agentCount}</td>
      <td>{ago(project.lastActivityAt)}</td>
      <td>{project.role}</td>
      <td>
        <div class="row">
          <a href={`/boards/${project.projectId}/members`} title="Who is on this board, invitations and roles">
            Members
          </a>
          {!project.starred ? (
            <button
              type="button"
              disabled={star.pending}
              onClick={() => void star.go()}
              title="Open this board by default"
            >
              Star
            </button>
          ) : null}
          {project.owned ? (
            <>
              <button type="button" onClick={() => setRenaming(true)}>
                Rename
              </button>
              <ConfirmButton
                label="Delete"
                danger
                question={`Delete “${project.name}” and everything on it?`}
                disabled={remove.pending}
                onConfirm={() => void remove.go()}
              />
            </>
          ) : null}
        </div>
      </td>
    </tr>
  );
}
