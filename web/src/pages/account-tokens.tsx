// The account's Tokens tab: its service tokens listed, issued (the secret shown once) and revoked.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import type { ProjectSummary, Token } from '../types.js';
import { ago, ConfirmButton, ErrorNote, Field, Form, useAction } from '../ui/kit.js';
import { refuse } from './recovery.js';
import { allProjects, useLoad } from '../ui/load.js';
import { checkName, NAME_MAX, Section, SelectField, type Option } from './account-parts.js';

// ---------------------------------------------------------------------------------------------
// Service tokens.

type Scope = 'account' | 'workspace' | 'resource';
type BoardRole = 'admin' | 'member' | 'viewer';

type Issued = Reply<'/api/accounts/tokens', 'post'>;

const RESOURCE = /^(W-\d{1,9}|items|claims|shouts|status|doctrine|spec|feedback|history)$/;

const ofToken = (tokenId: string) => ({ params: { path: { tokenId } } });

export function TokensSection() {
  const tokens = useLoad(() => client.get('/api/accounts/tokens').then((r) => r.tokens));
  const projects = useLoad(allProjects);
  const [shown, setShown] = useState<Issued | null>(null);
  const boardName = (id: string | null): string =>
    id ? (projects.data?.find((p) => p.projectId === id)?.name ?? id) : '—';
  const issued = (result: Issued) => {
    setShown(result);
    tokens.reload();
  };
  return (
    <div class="form">
      {shown ? <SecretBox issued={shown} onHide={() => setShown(null)} /> : null}
      <Section id="tokens-heading" title="Service tokens">
        <ErrorNote error={tokens.error} />
        <ErrorNote error={projects.error} />
        {!tokens.data ? (
          tokens.error ? null : (
            <p class="muted">Loading tokens…</p>
          )
        ) : tokens.data.length === 0 ? (
          <p class="muted">No tokens yet. Issue one below for an agent.</p>
        ) : (
          <div class="scroll-x">
            <table class="list">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Board</th>
                  <th scope="col">Role</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {tokens.data.map((t) => (
                  <TokenRow
                    key={t.id}
                    token={t}
                    board={boardName(t.projectId)}
                    onChanged={tokens.reload}
                    onReissued={issued}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
      <IssueToken
        boards={(projects.data ?? []).filter((p) => p.role === 'owner' || p.role === 'admin')}
        onIssued={issued}
      />
    </div>
  );
}

/** The secret of a just-issued (or reissued) token: shown this once, with a Copy button. */
function SecretBox({ issued, onHide }: { issued: Issued; onHide: () => void }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const heading = useRef<HTMLHeadingElement>(null);
  // A new secret: forget "Copied", and bring it to the keyboard's and the eye's attention.
  useEffect(() => {
    setCopied('no');
    heading.current?.focus();
  }, [issued.secret]);
  const copy = () =>
    navigator.clipboard.writeText(issued.secret).then(
      () => setCopied('yes'),
      () => setCopied('failed'),
    );
  return (
    <section class="panel form" aria-labelledby="secret-heading">
      <h2 id="secret-heading" ref={heading} tabIndex={-1}>
        Secret for “{issued.token.name}”
      </h2>
      <p>Copy it now: it is shown only this once. Anyone holding it acts as this token.</p>
      <div class="secret">
        <code class="grow" aria-label="Token secret">
          {issued.secret}
        </code>
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      {copied === 'yes' ? (
        <div class="note ok" role="status">
          Copied
        </div>
      ) : copied === 'failed' ? (
        <ErrorNote
          error={refuse(
            'CLIPBOARD_DENIED',
            'The browser did not allow copying.',
            'Select the secret and copy it by hand.',
          )}
        />
      ) : null}
      <div class="row">
        <button type="button" onClick={onHide}>
          Hide secret
        </button>
      </div>
    </section>
  );
}

function expiryLabel(iso: string | null): string {
  if (!iso) return 'never';
  const at = new Date(iso);
  return `${Date.parse(iso) <= Date.now() ? 'expired ' : ''}${at.toLocaleDateString()}`;
}

function TokenRow({
  token,
  board,
  onChanged,
  onReissued,
}: {
  token: Token;
  board: string;
  onChanged: () => void;
  onReissued: (r: Issued) => void;
}) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(token.name);
  const rename = useAction(async () => {
    const next = checkName(name, 'token name', NAME_MAX, 'INVALID_INPUT');
    await client.patch('/api/accounts/tokens/{tokenId}', { ...ofToken(token.id), body: { name: next } });
    setRenaming(false);
    onChanged();
    return 'Renamed.';
  });
  const reissue = useAction(async () => {
    onReissued(await client.post('/api/accounts/tokens/{tokenId}/reissue', ofToken(token.id)));
    return 'Reissued.';
  });
  const revoke = useAction(async () => {
    await client.delete('/api/accounts/tokens/{tokenId}', ofToken(token.id));
    onChanged();
    return 'Revoked.';
  });
  const busy = rename.pending || reissue.pending || revoke.pending;
  const done = reissue.done ?? rename.done;
  return (
    <tr aria-busy={busy}>
      <td>{token.name}</td>
      <td>
        {token.scope}
        {token.resources ? <small class="muted"> ({token.resources.join(', ')})</small> : null}
      </td>
      <td>{board}</td>
      <td>{token.role ?? '—'}</td>
      <td>
        <code>{token.prefix}…</code>
      </td>
      <td>{ago(token.lastUsedAt)}</td>
      <td>{expiryLabel(token.expiresAt)}</td>
      <td>
        {renaming ? (
          <Form onSubmit={() => void rename.go()} pending={rename.pending} error={rename.error} submit="Save name">
            <Field label="New name" name="newName" value={name} onInput={setName} required maxLength={NAME_MAX} />
            <button type="button" onClick={() => (setRenaming(false), setName(token.name), rename.reset())}>
              Cancel
            </button>
          </Form>
        ) : (
          <div class="row">
            <button type="button" disabled={busy} onClick={() => (setRenaming(true), rename.reset())}>
              Rename
            </button>
            <ConfirmButton
              label="Reissue"
              question="A new secret; the old one stops working at once. Reissue?"
              disabled={busy}
              onConfirm={() => void reissue.go()}
            />
            <ConfirmButton
              label="Revoke"
              question="The token stops working at once. Revoke?"
              danger
              disabled={busy}
              onConfirm={() => void revoke.go()}
            />
          </div>
        )}
        {busy ? <small class="muted">Working…</small> : null}
        {done && !renaming ? <small role="status">{done}</small> : null}
        <ErrorNote error={reissue.error ?? revoke.error} />
      </td>
    </tr>
  );
}

const SCOPES: Option[] = [
  { value: 'account', label: 'Account: acts for the whole account' },
  { value: 'workspace', label: 'Workspace: one board' },
  { value: 'resource', label: 'Resource: some work items or groups of one board' },
];
const ROLES: Option[] = (['member', 'viewer', 'admin'] satisfies BoardRole[]).map((r) => ({ value: r, label: r }));

/** The end of the chosen local day, as the server's ISO date-time; it must be in the future. */
function expiryFrom(date: string): string | undefined {
  if (!date) return undefined;
  const at = new Date(`${date}T23:59:59`);
  if (Number.isNaN(at.getTime()))
    throw refuse('INVALID_INPUT', 'The expiry is not a date.', 'Pick a date, or leave it empty.');
  if (at.getTime() <= Date.now())
    throw refuse(
      'INVALID_INPUT',
      'The expiry must be in the future.',
      'Pick today or a later date, or leave it empty.',
    );
  return at.toISOString();
}

function resourcesFrom(text: string): string[] {
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!list.length)
    throw refuse(
      'INVALID_INPUT',
      'A resource token names at least one work id or group.',
      'List work ids (W-12) or groups, separated by commas.',
    );
  if (list.length > 100)
    throw refuse('INVALID_INPUT', 'A resource token names at most 100 resources.', 'Shorten the list.');
  const bad = list.find((r) => !RESOURCE.test(r));
  if (bad)
    throw refuse(
      'INVALID_INPUT',
      `“${bad}” is neither a work id nor an operation group.`,
      'Use W-<number>, or one of items, claims, shouts, status, doctrine, spec, feedback, history.',
    );
  return list;
}

function IssueToken({ boards, onIssued }: { boards: ProjectSummary[]; onIssued: (r: Issued) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('workspace');
  const [projectId, setProjectId] = useState('');
  const [role, setRole] = useState<BoardRole>('member');
  const [resources, setResources] = useState('');
  const [expires, setExpires] = useState('');
  const board = projectId || boards[0]?.projectId || '';
  const issue = useAction(async () => {
    const named = checkName(name, 'token name', NAME_MAX, 'INVALID_INPUT');
    if (scope !== 'account' && !board)
      throw refuse(
        'PROJECT_REQUIRED',
        'A board token needs a board.',
        'Pick a board you administer; create one first if you have none.',
      );
    const only = scope === 'resource' ? resourcesFrom(resources) : null;
    const expiresAt = expiryFrom(expires);
    const res = await client.post('/api/accounts/tokens', {
      body: {
        name: named,
        scope,
        ...(scope !== 'account' && { projectId: board, role }),
        ...(only && { resources: only }),
        ...(expiresAt && { expiresAt }),
      },
    });
    onIssued(res);
    setName('');
    setResources('');
    setExpires('');
    return `Issued “${res.token.name}”.`;
  });
  return (
    <Section id="issue-heading" title="Issue a token">
      <Form
        onSubmit={() => void issue.go()}
        pending={issue.pending}
        error={issue.error}
        success={issue.done}
        submit="Issue token"
      >
        <Field
          label="Token name"
          name="name"
          value={name}
          onInput={setName}
          required
          maxLength={NAME_MAX}
          hint="1 to 80 characters, e.g. the agent it is for."
        />
        <SelectField label="Scope" name="scope" value={scope} onChange={(v) => setScope(v as Scope)} options={SCOPES} />
        {scope === 'account' ? null : (
          <>
            <SelectField
              label="Board"
              name="projectId"
              value={board}
              onChange={setProjectId}
              options={
                boards.length
                  ? boards.map((p) => ({ value: p.projectId, label: p.name }))
                  : [{ value: '', label: 'No board you administer' }]
              }
              hint="Boards where you are admin or owner."
            />
            <SelectField
              label="Role"
              name="role"
              value={role}
              onChange={(v) => setRole(v as BoardRole)}
              options={ROLES}
              hint="Never above your own role on the board."
            />
          </>
        )}
        {scope === 'resource' ? (
          <Field
            label="Resources"
            name="resources"
            value={resources}
            onInput={setResources}
            required
            placeholder="W-12, items, claims"
            hint="Comma-separated work ids (W-12) or groups: items, claims, shouts, status, doctrine, spec, feedback, history."
          />
        ) : null}
        <Field
          label="Expires on (optional)"
          type="date"
          name="expiresAt"
          value={expires}
          onInput={setExpires}
          hint="The token stops working at the end of that day; empty: never expires."
        />
      </Form>
    </Section>
  );
}
