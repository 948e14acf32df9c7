// The device-approval page (/device, the device flow's verificationUri): a signed-in person checks
// which agent shows the code, picks a board they administer, and approves or denies. The agent's
// next poll then receives its token (or the denial).
import { useEffect, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import { queryParam } from '../router.js';
import { now } from '../session.js';
import type { ProjectSummary } from '../types.js';
import { ConfirmButton, ErrorNote, Field, Form, useAction } from '../ui/kit.js';
import { allProjects, useLoad } from '../ui/load.js';

type PendingRequest = Reply<'/api/auth/device/lookup', 'get'>;

const administers = (p: ProjectSummary): boolean => p.role === 'owner' || p.role === 'admin';

export function DevicePage() {
  const [code, setCode] = useState(queryParam('code') ?? '');
  const lookup = useAction((userCode: string) =>
    client.get('/api/auth/device/lookup', { params: { query: { userCode: userCode.trim() } } }),
  );
  useEffect(() => {
    if (code) void lookup.go(code);
  }, []);
  const request = lookup.done;
  return (
    <div class="narrow panel form" style={{ maxWidth: '480px' }}>
      <h1 style={{ margin: 0 }}>Connect an agent</h1>
      {request ? (
        <Approval request={request} other={() => (setCode(''), lookup.reset())} />
      ) : (
        <>
          <p class="muted" style={{ margin: 0 }}>
            An agent asked for a token to work on one of your boards. Type the code it shows you.
          </p>
          <Form onSubmit={() => void lookup.go(code)} pending={lookup.pending} error={lookup.error} submit="Continue">
            <Field
              label="Code"
              name="user-code"
              value={code}
              onInput={setCode}
              required
              maxLength={9}
              autocomplete="off"
              placeholder="XXXX-XXXX"
              hint="Eight letters, as the agent shows them; the dash is optional."
            />
          </Form>
        </>
      )}
    </div>
  );
}

function Approval({ request, other }: { request: PendingRequest; other: () => void }) {
  const projects = useLoad(allProjects);
  const boards = (projects.data ?? []).filter(administers);
  const [projectId, setProjectId] = useState('');
  useEffect(() => {
    if (projectId || !boards[0]) return;
    setProjectId(
      boards.some((b) => b.projectId === request.requestedProjectId)
        ? request.requestedProjectId!
        : boards[0].projectId,
    );
  }, [projects.data]);
  const decide = useAction((approve: boolean) =>
    client.post('/api/auth/device/approve', { body: { userCode: request.userCode, projectId, approve } }),
  );
  const decision = decide.done;
  const boardName = (id: string) => boards.find((b) => b.projectId === id)?.name ?? id;
  const secondsLeft = Math.max(0, Math.round((Date.parse(request.expiresAt) - now.value) / 1000));

  if (decision) {
    return (
      <>
        <div class="note ok" role="status">
          {decision.status === 'approved' ? (
            <span>
              Approved: <strong>{decision.clientName}</strong> receives its token for{' '}
              <strong>{boardName(decision.projectId)}</strong> at its next poll, within a few seconds.
            </span>
          ) : (
            <span>
              Denied: <strong>{decision.clientName}</strong> is told so at its next poll and gets no token.
            </span>
          )}
        </div>
        <p class="row" style={{ margin: 0 }}>
          <a href={`/boards/${encodeURIComponent(decision.projectId)}`}>Open {boardName(decision.projectId)}</a>
          <span style={{ flex: 1 }} />
          <button type="button" class="link" onClick={other}>
            Connect another agent
          </button>
        </p>
      </>
    );
  }

  return (
    <>
      <p class="muted" style={{ margin: 0 }}>
        Approve only if the agent you are setting up shows this very code: whoever holds it gets a token on the board
        you pick.
      </p>
      <dl class="facts">
        <div class="row">
          <dt class="muted">Agent</dt>
          <dd>
            <strong>{request.clientName}</strong>
          </dd>
        </div>
        <div class="row">
          <dt class="muted">Code</dt>
          <dd>
            <code style={{ fontSize: '1rem', letterSpacing: '0.1em' }}>{request.userCode}</code>
          </dd>
        </div>
        <div class="row">
          <dt class="muted">Its token</dt>
          <dd>
            {request.tokenLifetimeDays === null
              ? 'works until you revoke it'
              : `works for ${request.tokenLifetimeDays} days, until ${new Date(now.value + request.tokenLifetimeDays * 86_400_000).toISOString().slice(0, 10)}; extend or revoke it under Tokens`}
          </dd>
        </div>
        <div class="row">
          <dt class="muted">Code expires</dt>
          <dd>
            {secondsLeft > 0
              ? `in ${Math.floor(secondsLeft / 60)}:${String(secondsLeft % 60).padStart(2, '0')}`
              : 'now: ask the agent to start again'}
          </dd>
        </div>
      </dl>
      <ErrorNote error={projects.error} />
      {projects.data && boards.length === 0 ? (
        <p class="note info">
          You administer no board. Approving needs the admin or owner role on the board the agent will work on: create a
          board, or ask its owner.
        </p>
      ) : null}
      {boards.length > 0 ? (
        <label class="field">
          <span>Board</span>
          <select
            name="device-board"
            value={projectId}
            onChange={(e) => setProjectId((e.target as HTMLSelectElement).value)}
          >
            {boards.map((b) => (
              <option key={b.projectId} value={b.projectId}>
                {b.name} ({b.role})
              </option>
            ))}
          </select>
          <small>The agent works there as a member, with a token issued on your behalf.</small>
        </label>
      ) : null}
      <ErrorNote error={decide.error} />
      <div class="row">
        <button
          type="button"
          class="primary"
          disabled={decide.pending || !projectId}
          onClick={() => void decide.go(true)}
        >
          {decide.pending ? 'Working…' : 'Approve'}
        </button>
        <ConfirmButton
          label="Deny"
          question="Deny this agent a token?"
          danger
          disabled={decide.pending}
          onConfirm={() => void decide.go(false)}
        />
        <span style={{ flex: 1 }} />
        <button type="button" class="link" onClick={other}>
          Use another code
        </button>
      </div>
    </>
  );
}
