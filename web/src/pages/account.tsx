// The signed-in account, one section per tab: profile, security (email and password), service
// tokens (secrets shown once), billing, rewind, and deletion.
import { batch } from '@preact/signals';
import { useState } from 'preact/hooks';
import { client, csrfToken } from '../api.js';
import { navigate } from '../router.js';
import { me, signedIn, type Account } from '../session.js';
import { ErrorNote, Field, Form, useAction } from '../ui/kit.js';
import { charCount, checkNewPassword, NewPasswordFields, refuse } from './recovery.js';
import { BillingSection } from './billing.js';
import { RewindSection } from './rewind.js';
import { allProjects, useLoad } from '../ui/load.js';
import { NAME_MAX, Section, SelectField, type Option } from './account-parts.js';
import { TokensSection } from './account-tokens.js';

const SECTIONS = [
  { id: 'profile', label: 'Profile' },
  { id: 'security', label: 'Security' },
  { id: 'tokens', label: 'Tokens' },
  { id: 'billing', label: 'Billing' },
  { id: 'rewind', label: 'Rewind' },
  { id: 'delete', label: 'Delete account' },
] as const;

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
