// The page an invitation link opens (/invitations/{invitationId}#token=…). The link's token is kept
// for this tab when the page loads, so signing in (which changes the address) does not lose it.
import { useState } from 'preact/hooks';
import { ApiError, client, refused } from '../api.js';
import { navigate } from '../router.js';
import { me, signOut } from '../session.js';
import { ErrorNote, useAction } from '../ui/kit.js';
import { useLoad } from '../ui/load.js';
import { left, ROLE_HELP } from './sharing.js';

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
