// The signed-in account, one section per tab: profile, security (email and password), service
// tokens (secrets shown once), billing, rewind, and deletion.
import { batch } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client, csrfToken } from '../api.js';
import { navigate } from '../router.js';
import { me, signedIn, type Account } from '../session.js';
import type { ProjectSummary, Token } from '../types.js';
import { ago, ConfirmButton, ErrorNote, Field, Form, useAction } from '../ui/kit.js';
import { charCount, checkNewPassword, NewPasswordFields, refuse } from './recovery.js';
import { BillingSection } from './billing.js';
import { RewindSection } from './rewind.js';
import { allProjects, useLoad } from '../ui/load.js';

const SECTIONS = [
  { id: 'profile', label: 'Profile' },
  { id: 'security', label: 'Security' },
  { id: 'tokens', label: 'Tokens' },
  { id: 'billing', label: 'Billing' },
  { id: 'rewind', label: 'Rewind' },
  { id: 'delete', label: 'Delete account' },
] as const;

const NAME_MAX = 80;

// ---------------------------------------------------------------------------------------------
// Local helpers: loading, projects, selects, sections.

interface Option {
  value: string;
  label: string;
}

function SelectField(props: {
  label: string;
  name: string;
  value: string;
  onChange: (v: string) => void;
  options: Option[];
  hint?: string;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <select
        name={props.name}
        value={props.value}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {props.hint ? <small>{props.hint}</small> : null}
    </label>
  );
}

/** A titled block of a tab; its heading names the region for assistive tech and tests. */
function Section({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section class="panel form" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** The server's 1..max rule for a name, counted as `count` counts. */
function checkName(
  value: string,
  what: string,
  max: number,
  code: string,
  count: (s: string) => number = (s) => s.length,
): string {
  const name = value.trim();
  if (!name) throw refuse(code, `The ${what} cannot be empty.`, `Type 1 to ${max} characters.`);
  if (count(name) > max) throw refuse(code, `The ${what} is at most ${max} characters.`, 'Shorten it.');
  return name;
}

// ---------------------------------------------------------------------------------------------
// Page.

export function AccountPage({ section }: { section: string }) {
  const account = me.value;
  if (!account) return null;
  const known = SECTIONS.some((s) => s.id === section);
  return (
    <div style={{ maxWidth: '960px', margin: '0 auto' }}>
      <h1>Account</h1>
      <nav class="tabs" aria-label="Account sections">
        {SECTIONS.map((s) => (
          <a
            key={s.id}
            href={`/account/${s.id}`}
            class={s.id === section ? 'active' : ''}
            aria-current={s.id === section ? 'page' : undefined}
          >
            {s.label}
          </a>
        ))}
      </nav>
      {section === 'profile' ? <ProfileSection account={account} /> : null}
      {section === 'security' ? <SecuritySection account={account} /> : null}
      {section === 'tokens' ? <TokensSection /> : null}
      {section === 'billing' ? <BillingSection /> : null}
      {section === 'rewind' ? <RewindSection /> : null}
      {section === 'delete' ? <DeleteSection account={account} /> : null}
      {known ? null : (
        <ErrorNote
          error={refuse('NOT_FOUND', `There is no account section “${section}”.`, 'Pick one of the tabs above.')}
        />
      )}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Profile.

function ProfileSection({ account }: { account: Account }) {
  const projects = useLoad(allProjects);
  const [displayName, setDisplayName] = useState(account.displayName ?? '');
  const [defaultProjectId, setDefaultProjectId] = useState(account.defaultProjectId ?? '');
  const save = useAction(async () => {
    const name = displayName.trim();
    if (charCount(name) > NAME_MAX)
      throw refuse(
        'INVALID_DISPLAY_NAME',
        `The display name is at most ${NAME_MAX} characters.`,
        'Shorten it, or leave it empty to clear it.',
      );
    // The operation needs a selected project: the new default, else any board of the account.
    const selected = defaultProjectId || account.defaultProjectId || projects.data?.[0]?.projectId;
    const res = await client.patch('/api/account/profile', {
      params: { query: { projectId: selected } },
      body: { displayName: name || null, defaultProjectId: defaultProjectId || null },
    });
    signedIn({ ...account, displayName: res.displayName, defaultProjectId: res.defaultProjectId });
    setDisplayName(res.displayName ?? '');
    return 'Profile saved.';
  });
  const options: Option[] = [
    { value: '', label: 'No default' },
    ...(projects.data ?? []).map((p) => ({ value: p.projectId, label: p.name })),
  ];
  return (
    <Section id="profile-heading" title="Profile">
      <p class="muted">
        Signed in as <strong>{account.email}</strong> (
        {account.emailVerified ? 'verified' : 'not verified yet: follow the link we mailed'}).
      </p>
      <ErrorNote error={projects.error} />
      <Form
        onSubmit={() => void save.go()}
        pending={save.pending}
        error={save.error}
        success={save.done}
        submit="Save profile"
      >
        <Field
          label="Display name"
          name="displayName"
          value={displayName}
          onInput={setDisplayName}
          autocomplete="nickname"
          hint={`Up to ${NAME_MAX} characters; leave empty to clear it.`}
        />
        <SelectField
          label="Default board"
          name="defaultProjectId"
          value={defaultProjectId}
          onChange={setDefaultProjectId}
          options={options}
          hint={projects.data ? 'The board used when a request names none.' : 'Loading your boards…'}
        />
      </Form>
    </Section>
  );
}

// ---------------------------------------------------------------------------------------------
// Security: both changes rotate the session; the new CSRF token is kept by api.ts.

function SecuritySection({ account }: { account: Account }) {
  return (
    <div class="form">
      <ChangeEmail account={account} />
      <ChangePassword />
    </div>
  );
}

function ChangeEmail({ account }: { account: Account }) {
  const [newEmail, setNewEmail] = useState('');
  const [currentPassword, setCurrentPassword] = useState('');
  const change = useAction(async () => {
    const res = await client.post('/api/account/email', { body: { currentPassword, newEmail: newEmail.trim() } });
    signedIn(res.account);
    setNewEmail('');
    setCurrentPassword('');
    return `Your email is now ${res.account.email}. We mailed a link to confirm it.`;
  });
  return (
    <Section id="email-heading" title="Change email">
      <p class="muted">Now: {account.email}. Other sessions are signed out.</p>
      <Form
        onSubmit={() => void change.go()}
        pending={change.pending}
        error={change.error}
        success={change.done}
        submit="Change email"
      >
        <Field
          label="New email"
          type="email"
          name="newEmail"
          value={newEmail}
          onInput={setNewEmail}
          required
          autocomplete="email"
        />
        <Field
          label="Current password"
          type="password"
          name="currentPassword"
          value={currentPassword}
          onInput={setCurrentPassword}
          required
          autocomplete="current-password"
        />
      </Form>
    </Section>
  );
}

function ChangePassword() {
  const [currentPassword, setCurrentPassword] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const change = useAction(async () => {
    checkNewPassword(password, confirm);
    const res = await client.post('/api/auth/change-password', { body: { currentPassword, newPassword: password } });
    signedIn(res.account);
    setCurrentPassword('');
    setPassword('');
    setConfirm('');
    return 'Password changed. Other sessions are signed out.';
  });
  return (
    <Section id="password-heading" title="Change password">
      <Form
        onSubmit={() => void change.go()}
        pending={change.pending}
        error={change.error}
        success={change.done}
        submit="Change password"
      >
        <Field
          label="Current password"
          type="password"
          name="currentPassword"
          value={currentPassword}
          onInput={setCurrentPassword}
          required
          autocomplete="current-password"
        />
        <NewPasswordFields password={password} confirm={confirm} onPassword={setPassword} onConfirm={setConfirm} />
      </Form>
    </Section>
  );
}

// ---------------------------------------------------------------------------------------------
// Service tokens.

type Scope = 'account' | 'workspace' | 'resource';
type BoardRole = 'admin' | 'member' | 'viewer';

type Issued = Reply<'/api/accounts/tokens', 'post'>;

const RESOURCE = /^(W-\d{1,9}|items|claims|shouts|status|doctrine|spec|feedback|history)$/;

const ofToken = (tokenId: string) => ({ params: { path: { tokenId } } });

function TokensSection() {
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

// ---------------------------------------------------------------------------------------------
// Delete.

function DeleteSection({ account }: { account: Account }) {
  const [confirmEmail, setConfirmEmail] = useState('');
  const [currentPassword, setCurrentPassword] = useState('');
  const remove = useAction(async () => {
    if (confirmEmail !== account.email)
      throw refuse(
        'ACCOUNT_DELETE_CONFIRM_MISMATCH',
        'The typed email does not match the account’s.',
        `Type ${account.email} exactly.`,
      );
    await client.delete('/api/account', { body: { confirmEmail, currentPassword } });
    batch(() => {
      csrfToken.value = null;
      me.value = null;
      navigate('/signup');
    });
    return 'Deleted.';
  });
  return (
    <Section id="delete-heading" title="Delete account">
      <div class="note error">
        <strong>
          This deletes the account and every board it owns, with their items, members and tokens. It cannot be undone.
        </strong>
      </div>
      <Form onSubmit={() => void remove.go()} pending={remove.pending} error={remove.error} submit="Delete account">
        <Field
          label={`Type your email (${account.email}) to confirm`}
          name="confirmEmail"
          value={confirmEmail}
          onInput={setConfirmEmail}
          required
          autocomplete="off"
        />
        <Field
          label="Current password"
          type="password"
          name="currentPassword"
          value={currentPassword}
          onInput={setCurrentPassword}
          required
          autocomplete="current-password"
        />
      </Form>
    </Section>
  );
}
