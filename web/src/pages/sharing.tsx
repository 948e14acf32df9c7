// Sharing a board: its members and invitations (/boards/{projectId}/members). The page an
// invitation link opens is web/src/pages/invitation.tsx.
import { useState } from 'preact/hooks';
import type { Reply } from '@agent-board/client';
import { client } from '../api.js';
import { navigate } from '../router.js';
import { me } from '../session.js';
import { ago, ConfirmButton, ErrorNote, Field, Form, useAction } from '../ui/kit.js';
import { useLoad } from '../ui/load.js';

type Listing = Reply<'/api/boards/{projectId}/members', 'get'>;
type Member = Listing['members'][number];
type Invitation = Reply<'/api/boards/{projectId}/invitations', 'get'>['invitations'][number];
type Role = Member['role'];
type Granted = Exclude<Role, 'owner'>;

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
const OWNER_HELP = 'owner: members, roles, transfers, billing, deletion';
export const ROLE_HELP: Record<Granted, string> = {
  admin: 'admin: operator moves, spec and doctrine decisions, invitations',
  member: 'member: all agent work on items',
  viewer: 'viewer: reads and live updates only',
};

// ── /boards/{projectId}/members ─────────────────────────────────────────────────────────────────

/** "in 6 days", "in 3 hours": how long an invitation or an offer stays open. */
export function left(iso: string): string {
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
