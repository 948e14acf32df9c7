// Sharing a board: its members and invitations (/boards/{projectId}/members), and the page an
// invitation link opens (/invitations/{invitationId}#token=…). The link's token is kept for this tab
// when the page loads, so signing in (which changes the address) does not lose it.
import { useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { ApiError, client, refused } from '../api.js';
import { navigate } from '../router.js';
import { me, signOut } from '../session.js';
import { ago, ConfirmButton, ErrorNote, Field, Form, useAction } from '../ui/kit.js';
import { useLoad } from '../ui/load.js';

type Listing = Reply<'/api/boards/{projectId}/members', 'get'>;
type Member = Listing['members'][number];
type Invitation = Reply<'/api/boards/{projectId}/invitations', 'get'>['invitations'][number];
type Role = Member['role'];
type Granted = Exclude<Role, 'owner'>;

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
const OWNER_HELP = 'owner: members, roles, transfers, billing, deletion';
const ROLE_HELP: Record<Granted, string> = {
  admin: 'admin: operator moves, spec and doctrine decisions, invitations',
  member: 'member: all agent work on items',
  viewer: 'viewer: reads and live updates only',
};

// ── the invitation link, kept for this tab ──────────────────────────────────────────────────────

const KEPT = 'agent-board.invitation';

interface Link {
  invitationId: string;
  token: string;
}

/** Runs once when the bundle loads, before any redirect to sign-in drops the address's hash. */
(function keepLink(): void {
  const id = /^\/invitations\/([\w-]{1,64})\/?$/.exec(location.pathname)?.[1];
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (!id || !token) return;
  sessionStorage.setItem(KEPT, JSON.stringify({ invitationId: id, token }));
  // The token stays out of the address bar (and out of history, bookmarks and screenshots).
  history.replaceState(history.state, '', location.pathname + location.search);
})();

/** The invitation link opened in this tab and not used yet, if any. */
export function pendingInvitation(): Link | null {
  try {
    const kept = JSON.parse(sessionStorage.getItem(KEPT) ?? 'null') as Link | null;
    return kept && typeof kept.invitationId === 'string' && typeof kept.token === 'string' ? kept : null;
  } catch {
    return null;
  }
}

const forgetInvitation = (): void => sessionStorage.removeItem(KEPT);

// ── /invitations/{invitationId} ─────────────────────────────────────────────────────────────────

/** Refusals after which the link can never work: it is dropped (a mismatch keeps it for the right account). */
const DEAD_LINK = ['INVALID_LINK_TOKEN', 'EXPIRED_TOKEN', 'INVITATION_NOT_FOUND', 'ALREADY_MEMBER'] as const;
const CLOSED: Record<string, string> = {
  accepted: 'This invitation was already accepted.',
  revoked: 'This invitation was revoked by the board’s admins.',
  expired: 'This invitation’s link has expired.',
};

export function InvitationPage({ invitationId }: { invitationId: string }) {
  const [token] = useState(() => {
    const kept = pendingInvitation();
    return kept?.invitationId === invitationId ? kept.token : null;
  });
  const invitation = { params: { path: { invitationId } } };
  const preview = useLoad(() => client.get('/api/boards/invitations/{invitationId}', invitation));
  const accept = useAction(async () => {
    try {
      const res = await client.post('/api/boards/invitations/{invitationId}/accept', {
        ...invitation,
        body: { token: token! },
      });
      forgetInvitation();
      return res;
    } catch (e) {
      if (refused(e, ...DEAD_LINK)) forgetInvitation();
      throw e;
    }
  });
  const failed = preview.error ?? accept.error;
  const unconfirmed = refused(failed, 'EMAIL_NOT_VERIFIED');
  // After the person opened the confirmation link (often in another tab), this tab asks again.
  const recheck = useAction(async () => {
    await client.get('/api/boards/invitations/{invitationId}', invitation);
    accept.reset();
    preview.reload();
  });
  const switchAccount = async () => {
    await signOut();
    navigate(`/signin?next=${encodeURIComponent(`/invitations/${invitationId}`)}`);
  };
  const p = preview.data;
  return (
    <div class="narrow panel form" aria-labelledby="invitation">
      <h1 id="invitation">{p ? `Join “${p.name}”` : 'Board invitation'}</h1>
      {accept.done ? (
        <>
          <div class="note ok" role="status">
            You joined “{accept.done.name}” as {accept.done.role}.
          </div>
          <p class="row">
            <a href={`/boards/${accept.done.projectId}`}>Open the board</a>
            <a href={`/boards/${accept.done.projectId}/members`}>See its members</a>
          </p>
        </>
      ) : (
        <>
          {p ? (
            <>
              <p>
                {p.invitedBy ?? 'A board admin'} invites you to the board <strong>“{p.name}”</strong> as{' '}
                <strong>{p.role}</strong> ({ROLE_HELP[p.role].replace(/^\w+: /, '')}).
              </p>
              <p class="muted">
                You are signed in as {me.value?.email}, the invited address.{' '}
                {p.status === 'pending' ? `The link works once and expires ${left(p.expiresAt)}.` : ''}
              </p>
            </>
          ) : !preview.error ? (
            <p class="muted">Loading the invitation…</p>
          ) : null}
          {unconfirmed ? (
            <ConfirmFirst
              email={me.value?.email ?? 'your address'}
              checking={recheck.pending}
              stillUnconfirmed={refused(recheck.error, 'EMAIL_NOT_VERIFIED')}
              onCheck={() => void recheck.go()}
            />
          ) : (
            <ErrorNote error={failed} />
          )}
          {!unconfirmed && recheck.error ? <ErrorNote error={recheck.error} /> : null}
          {p && p.status !== 'pending' ? (
            <ErrorNote
              error={
                new ApiError(
                  0,
                  'INVALID_LINK_TOKEN',
                  CLOSED[p.status]!,
                  p.status === 'accepted'
                    ? 'Open the board from your boards.'
                    : 'Ask the board’s admins to send a new invitation.',
                )
              }
            />
          ) : null}
          {p?.status === 'pending' && !token ? (
            <ErrorNote
              error={
                new ApiError(
                  0,
                  'INVALID_LINK_TOKEN',
                  'This link is incomplete: it carries no token.',
                  'Open the link from the invitation mail exactly as sent, or ask the board’s admins to resend it.',
                )
              }
            />
          ) : null}
          {refused(failed, 'INVITATION_EMAIL_MISMATCH') ? (
            <>
              <p>
                Sign in (or create an account) with the address the invitation was mailed to; this tab keeps the link
                meanwhile.
              </p>
              <button type="button" class="primary" onClick={() => void switchAccount()}>
                Sign out and switch account
              </button>
            </>
          ) : p?.status === 'pending' && token && !unconfirmed ? (
            <button type="button" class="primary" disabled={accept.pending} onClick={() => void accept.go()}>
              {accept.pending ? 'Working…' : `Accept and join as ${p.role}`}
            </button>
          ) : null}
        </>
      )}
      <p>
        <a href="/projects">Your boards</a>
      </p>
    </div>
  );
}

/** What to do when the invited account has not confirmed its address: the invitation waits in this tab meanwhile. */
function ConfirmFirst({
  email,
  checking,
  stillUnconfirmed,
  onCheck,
}: {
  email: string;
  checking: boolean;
  stillUnconfirmed: boolean;
  onCheck: () => void;
}) {
  const resend = useAction(() => client.post('/api/auth/verify-email/resend'));
  return (
    <>
      <div class="note error" role="alert">
        <strong>Confirm your email address first.</strong>
        <span>
          Joining a board as {email} takes proof that this address is yours, so a forwarded invitation link is not
          enough.
        </span>
      </div>
      <ol>
        <li>
          Find the mail “Verify your email” we sent to <strong>{email}</strong> when you signed up (or last changed your
          address), and open its link. It works for 48 hours; below you can have a new one sent.
        </li>
        <li>Come back to this tab: it keeps your invitation link.</li>
        <li>Check again, then accept.</li>
      </ol>
      {stillUnconfirmed ? (
        <p class="muted" role="status">
          {email} is not confirmed yet: open the link in the mail first.
        </p>
      ) : null}
      <div class="row">
        <button type="button" class="primary" disabled={checking} onClick={onCheck}>
          {checking ? 'Checking…' : 'I confirmed my address: check again'}
        </button>
        <button type="button" disabled={resend.pending} onClick={() => void resend.go()}>
          {resend.pending ? 'Sending…' : 'Mail me a new confirmation link'}
        </button>
      </div>
      {resend.done ? (
        <p class="muted" role="status">
          {resend.done.sent
            ? `A new confirmation link is on its way to ${email}.`
            : 'No link went out: your address is confirmed already (check again), or three links went out this hour (use the newest, or ask again later).'}
        </p>
      ) : null}
      <ErrorNote error={resend.error} />
    </>
  );
}

// ── /boards/{projectId}/members ─────────────────────────────────────────────────────────────────

/** "in 6 days", "in 3 hours": how long an invitation or an offer stays open. */
function left(iso: string): string {
  const s = Math.round((Date.parse(iso) - Date.now()) / 1000);
  if (s <= 0) return 'expired';
  if (s < 3600) return `in ${Math.max(1, Math.round(s / 60))} min`;
  if (s < 86400) return `in ${Math.round(s / 3600)} h`;
  const days = Math.round(s / 86400);
  return `in ${days} day${days === 1 ? '' : 's'}`;
}

export function MembersPage({ projectId }: { projectId: string }) {
  const listing = useLoad(() => client.get('/api/boards/{projectId}/members', { params: { path: { projectId } } }));
  const l = listing.data;
  if (!l) {
    return (
      <>
        <h1>Members</h1>
        {listing.error ? <ErrorNote error={listing.error} /> : <p class="muted">Loading…</p>}
      </>
    );
  }
  const operator = RANK[l.role] >= RANK.admin;
  return (
    <>
      <div class="board-head">
        <h1>Members of “{l.name}”</h1>
        <a href={`/boards/${projectId}`}>Open the board</a>
        <span class="muted">Your role: {l.role}</span>
      </div>
      <TransferNote listing={l} changed={listing.reload} />
      <section class="panel" aria-labelledby="members">
        <h2 id="members">People on this board</h2>
        <p class="muted">{[OWNER_HELP, ...Object.values(ROLE_HELP)].join(' · ')}.</p>
        {operator ? null : (
          <p class="muted">
            Only the board’s admins and owner see members’ email addresses; members without a display name show as a
            short id.
          </p>
        )}
        <div class="scroll-x">
          <table class="list">
            <thead>
              <tr>
                <th>Member</th>
                <th>Role</th>
                <th>Joined</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {l.members.map((m) => (
                <MemberRow key={m.userId} projectId={projectId} listing={l} member={m} changed={listing.reload} />
              ))}
            </tbody>
          </table>
        </div>
      </section>
      {operator ? (
        <Invitations projectId={projectId} myRole={l.role} />
      ) : (
        <p class="muted">Admins and the owner invite people to this board.</p>
      )}
    </>
  );
}

function TransferNote({ listing, changed }: { listing: Listing; changed: () => void }) {
  const t = listing.transfer;
  const accept = useAction(async () => {
    await client.post('/api/boards/transfers/{transferId}/accept', { params: { path: { transferId: t!.transferId } } });
    changed();
  });
  if (!t) return null;
  const to = listing.members.find((m) => m.userId === t.toUserId);
  if (t.status === 'accepted') {
    // Accepted, but a failure cut the move short: the recipient's next accept finishes it.
    return t.toUserId === me.value?.id ? (
      <div class="note info notice" role="status">
        <span>
          You accepted this board, but taking it over did not finish: something failed part-way. Finish it now; nothing
          is lost meanwhile.
        </span>
        <button type="button" class="primary" disabled={accept.pending} onClick={() => void accept.go()}>
          {accept.pending ? 'Working…' : 'Finish taking over'}
        </button>
        <ErrorNote error={accept.error} />
      </div>
    ) : (
      <div class="note info notice" role="status">
        <span>
          Ownership is moving to {to ? to.name : 'a member'}: they accepted, and the move finishes when they accept
          again.
        </span>
      </div>
    );
  }
  if (t.toUserId === me.value?.id) {
    return (
      <div class="note info notice" role="status">
        <span>
          The owner offers you this board (the offer expires {left(t.expiresAt)}). As owner you answer for its members,
          billing and deletion; the current owner stays on as admin.
        </span>
        <ConfirmButton
          label="Accept ownership"
          question={`Become the owner of “${listing.name}”?`}
          disabled={accept.pending}
          onConfirm={() => void accept.go()}
        />
        <ErrorNote error={accept.error} />
      </div>
    );
  }
  return (
    <div class="note info notice" role="status">
      <span>
        Ownership is offered to {to ? to.name : 'a member'}; it moves when they accept (the offer expires{' '}
        {left(t.expiresAt)}).
      </span>
    </div>
  );
}

function MemberRow({
  projectId,
  listing,
  member,
  changed,
}: {
  projectId: string;
  listing: Listing;
  member: Member;
  changed: () => void;
}) {
  const mine = listing.role;
  const self = member.userId === me.value?.id;
  // Part-way through taking the board over: neither changed nor removed until that finishes.
  const incoming = listing.transfer?.status === 'accepted' && listing.transfer.toUserId === member.userId;
  const choices: Granted[] =
    member.role === 'owner' || incoming
      ? []
      : mine === 'owner'
        ? ['admin', 'member', 'viewer']
        : mine === 'admin' && member.role !== 'admin'
          ? ['member', 'viewer']
          : [];
  const removable =
    member.role !== 'owner' && !incoming && (self || (RANK[mine] >= RANK.admin && RANK[member.role] < RANK[mine]));
  const [role, setRole] = useState<Granted>(member.role === 'owner' ? 'admin' : member.role);
  const who = member.name;
  const params = { path: { projectId, userId: member.userId } };
  const change = useAction(async () => {
    await client.post('/api/boards/{projectId}/members/{userId}/role', { params, body: { role } });
    changed();
  });
  const remove = useAction(async () => {
    await client.delete('/api/boards/{projectId}/members/{userId}', { params });
    if (self) navigate('/projects');
    else changed();
  });
  const offer = useAction(async () => {
    await client.post('/api/boards/{projectId}/transfers', {
      params: { path: { projectId } },
      body: { toUserId: member.userId },
    });
    changed();
  });
  return (
    <tr>
      <td class="name">
        <strong>{who}</strong>
        {self ? <span class="muted"> (you)</span> : null}
        {member.displayName && member.email ? <div class="muted">{member.email}</div> : null}
        <ErrorNote error={change.error ?? remove.error ?? offer.error} />
      </td>
      <td>
        {choices.length > 0 ? (
          <span class="row">
            <select
              aria-label={`Role of ${who}`}
              value={role}
              onChange={(e) => setRole((e.target as HTMLSelectElement).value as Granted)}
              style={{ width: 'auto' }}
            >
              {choices.map((c) => (
                <option key={c} value={c} title={ROLE_HELP[c]}>
                  {c}
                </option>
              ))}
            </select>
            {role !== member.role ? (
              <ConfirmButton
                label="Change role"
                question={`Make ${who} ${role === 'admin' ? 'an' : 'a'} ${role}?`}
                disabled={change.pending}
                onConfirm={() => void change.go()}
              />
            ) : null}
          </span>
        ) : (
          member.role
        )}
      </td>
      <td>{ago(member.acceptedAt)}</td>
      <td>
        <div class="row">
          {removable ? (
            <ConfirmButton
              label={self ? 'Leave' : 'Remove'}
              danger
              question={
                self
                  ? `Leave “${listing.name}”? Your tokens for it stop working.`
                  : `Remove ${who}? Their tokens for this board stop working at once.`
              }
              disabled={remove.pending}
              onConfirm={() => void remove.go()}
            />
          ) : null}
          {mine === 'owner' && !self ? (
            <ConfirmButton
              label="Transfer ownership"
              question={`Offer “${listing.name}” to ${who}? They become owner when they accept; you stay on as admin.`}
              disabled={offer.pending}
              onConfirm={() => void offer.go()}
            />
          ) : null}
        </div>
      </td>
    </tr>
  );
}

function Invitations({ projectId, myRole }: { projectId: string; myRole: Role }) {
  const list = useLoad(() =>
    client.get('/api/boards/{projectId}/invitations', { params: { path: { projectId } } }).then((r) => r.invitations),
  );
  const roles: Granted[] = myRole === 'owner' ? ['member', 'viewer', 'admin'] : ['member', 'viewer'];
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Granted>('member');
  const invite = useAction(async () => {
    const res = await client.post('/api/boards/{projectId}/invitations', {
      params: { path: { projectId } },
      body: { email: email.trim(), role },
    });
    setEmail('');
    list.reload();
    return `Invitation mailed to ${res.invitation.email} as ${res.invitation.role}; the link works once, for 7 days.`;
  });
  return (
    <section class="panel" aria-labelledby="invitations" style={{ marginTop: '1rem' }}>
      <h2 id="invitations">Invitations</h2>
      <div style={{ maxWidth: '560px' }}>
        <Form
          onSubmit={() => void invite.go()}
          pending={invite.pending}
          error={invite.error}
          submit="Send invitation"
          success={invite.done}
        >
          <div class="row" style={{ alignItems: 'end' }}>
            <div class="grow">
              <Field
                label="Email"
                type="email"
                name="invite-email"
                value={email}
                onInput={setEmail}
                required
                maxLength={254}
                autocomplete="off"
              />
            </div>
            <label class="field">
              <span>Role</span>
              <select
                name="invite-role"
                value={role}
                onChange={(e) => setRole((e.target as HTMLSelectElement).value as Granted)}
              >
                {roles.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <small class="muted">{ROLE_HELP[role]}. The mailed link works once, for 7 days, for that address only.</small>
        </Form>
      </div>
      <ErrorNote error={list.error} />
      {list.data && list.data.length === 0 ? <p class="muted">No invitations yet.</p> : null}
      {list.data && list.data.length > 0 ? (
        <div class="scroll-x">
          <table class="list" style={{ marginTop: '0.75rem' }}>
            <thead>
              <tr>
                <th>Email</th>
                <th>Invited as</th>
                <th>Status</th>
                <th>Sent</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.map((i) => (
                <InvitationRow
                  key={i.invitationId}
                  projectId={projectId}
                  invitation={i}
                  mayManage={i.role !== 'admin' || myRole === 'owner'}
                  changed={list.reload}
                />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function InvitationRow({
  projectId,
  invitation: i,
  mayManage,
  changed,
}: {
  projectId: string;
  invitation: Invitation;
  mayManage: boolean;
  changed: () => void;
}) {
  const params = { path: { projectId, invitationId: i.invitationId } };
  const resend = useAction(async () => {
    await client.post('/api/boards/{projectId}/invitations/{invitationId}/resend', { params });
    changed();
    return 'A new link is mailed; the old one no longer works.';
  });
  const revoke = useAction(async () => {
    await client.post('/api/boards/{projectId}/invitations/{invitationId}/revoke', { params });
    changed();
  });
  const open = i.status === 'pending' || i.status === 'expired';
  const status =
    i.status === 'pending'
      ? `pending, expires ${left(i.expiresAt)}`
      : i.status === 'accepted' && i.acceptedAt
        ? `accepted ${ago(i.acceptedAt)}`
        : i.status;
  return (
    <tr>
      <td>
        {i.email}
        <ErrorNote error={resend.error ?? revoke.error} />
        {resend.done ? <div class="muted">{resend.done}</div> : null}
      </td>
      <td>{i.role}</td>
      <td>{status}</td>
      <td>{ago(i.createdAt)}</td>
      <td>
        {open && mayManage ? (
          <div class="row">
            <button type="button" disabled={resend.pending} onClick={() => void resend.go()}>
              Resend
            </button>
            <ConfirmButton
              label="Revoke"
              danger
              question={`Revoke the invitation of ${i.email}? Its link stops working.`}
              disabled={revoke.pending}
              onConfirm={() => void revoke.go()}
            />
          </div>
        ) : null}
      </td>
    </tr>
  );
}
