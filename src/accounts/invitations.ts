// Board invitations (DOMAIN.md "Sharing"): an admin or the owner invites an address with a role
// (only the owner invites admins); the mail carries a single-use link (32 random bytes, only its
// sha256 kept, 7 days); the invited person accepts it signed in under that address. Accepting is a
// version-checked write on the invitation, so of two accepts exactly one succeeds. A pending
// invitation is not a membership: it gives no access and lists no board.
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import { newSecret, sameDigest, sha256 } from '../auth/authenticator.js';
import type { Identity } from '../auth/identity.js';
import { atLeast, roleOn } from '../auth/project-selection.js';
import {
  DuplicateKeyError,
  modify,
  type InvitationRecord,
  type ProjectRecord,
  type Store,
} from '../../store/ports/store.js';
import type { MailMessage } from '../mail/mailer.js';
import { checkEmail } from './service.js';
import type { SharingMail } from './sharing-mail.js';
import { boardFor, iso, KEEP_CLOSED_MS, RECORD_ID, SHARING_TTL_MS, sharingRow, type SharingPorts } from './sharing.js';
import type { RequestOrigin } from '../audit-row.js';

/** Pending invitations one board may hold at once, and members it may have. */
export const MAX_PENDING_INVITATIONS = 100;
export const MAX_MEMBERS = 500;
const LIST_LIMIT = 200;

export type InvitedRole = InvitationRecord['role'];
export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export interface InvitationView {
  invitationId: string;
  projectId: string;
  email: string;
  role: InvitedRole;
  status: InvitationStatus;
  invitedBy: string;
  createdAt: string;
  /** When the current link stops working. */
  expiresAt: string;
  acceptedBy: string | null;
  acceptedAt: string | null;
}

export interface Accepted {
  invitationId: string;
  projectId: string;
  name: string;
  role: InvitedRole;
}

/** What the invited person sees of their invitation before accepting it. */
export interface InvitationPreview {
  invitationId: string;
  projectId: string;
  name: string;
  role: InvitedRole;
  email: string;
  invitedBy: string | null;
  status: InvitationStatus;
  expiresAt: string;
}

export const statusOf = (i: InvitationRecord, now: number): InvitationStatus =>
  i.status === 'pending' && i.expiresAt <= now ? 'expired' : i.status;

export function invitationView(i: InvitationRecord, now: number): InvitationView {
  return {
    invitationId: i._id,
    projectId: i.projectId,
    email: i.email,
    role: i.role,
    status: statusOf(i, now),
    invitedBy: i.invitedBy,
    createdAt: new Date(i.createdAt).toISOString(),
    expiresAt: new Date(i.expiresAt).toISOString(),
    acceptedBy: i.acceptedBy,
    acceptedAt: iso(i.acceptedAt),
  };
}

export class Invitations {
  constructor(
    private readonly ports: SharingPorts,
    private readonly mail: SharingMail,
  ) {}

  /** The board's invitations, newest first (admins and the owner). */
  async list(identity: Identity, projectId: string, now: number): Promise<InvitationView[]> {
    const board = await boardFor(this.ports, identity, projectId, 'admin');
    const rows = await this.ports.store.invitations.find(
      { projectId: board.id },
      {
        sort: [
          ['createdAt', -1],
          ['_id', 1],
        ],
        limit: LIST_LIMIT,
      },
    );
    return rows.map((i) => invitationView(i, now));
  }

  /**
   * Mails `email` a link to join the board as `role`. An earlier pending invitation of the same
   * address is revoked (its link dies): one address holds one live link per board. The checks, the
   * mail budget's slot and the writes are one step for the board (src/accounts/sharing-mail.ts).
   * Audited once mailed (invitation.create, naming the invitations it replaced).
   */
  async invite(
    identity: Identity,
    projectId: string,
    input: { email: string; role: InvitedRole },
    now: number,
    origin: RequestOrigin,
  ): Promise<InvitationView> {
    const board = await boardFor(this.ports, identity, projectId, 'admin');
    if (input.role === 'admin' && board.role !== 'owner')
      throw new AppError('ROLE_REQUIRED', 'Only the board’s owner invites admins.', {
        role: board.role,
        needed: 'owner',
      });
    const email = checkEmail(input.email);
    const { store } = this.ports;
    const [account, inviter] = await Promise.all([
      store.accounts.findOne({ email }),
      store.accounts.get(identity.accountId),
    ]);
    const token = newSecret(32);
    const record: InvitationRecord = {
      _id: randomUUID(),
      version: 1,
      projectId: board.id,
      email,
      role: input.role,
      tokenHash: sha256(token),
      invitedBy: identity.accountId,
      createdAt: now,
      expiresAt: now + SHARING_TTL_MS,
      status: 'pending',
      acceptedBy: null,
      acceptedAt: null,
    };
    let earlier: InvitationRecord[] = [];
    await this.mail.send({
      projectId: board.id,
      kind: 'invitation',
      to: email,
      now,
      check: async () => {
        if (account && (await store.members.get(`${board.id}:${account._id}`)))
          throw new AppError(
            'ALREADY_MEMBER',
            'That address belongs to a member of this board; change their role instead.',
          );
        await store.invitations.deleteMany({ projectId: board.id, expiresAt: { $lt: now - KEEP_CLOSED_MS } });
        const pending = (await store.invitations.find({ projectId: board.id, status: 'pending' })).filter(
          (i) => i.expiresAt > now,
        );
        earlier = pending.filter((i) => i.email === email);
        if (pending.length - earlier.length >= MAX_PENDING_INVITATIONS)
          throw new AppError(
            'INVITATION_LIMIT',
            `A board holds at most ${MAX_PENDING_INVITATIONS} pending invitations; revoke unused ones.`,
            { limit: MAX_PENDING_INVITATIONS },
          );
        if ((await store.members.count({ projectId: board.id })) >= MAX_MEMBERS) throw membersFull();
      },
      write: async () => {
        for (const old of earlier)
          await modify(store.invitations, old._id, (i) =>
            i.status === 'pending' ? { status: 'revoked' as const } : null,
          );
        await store.invitations.insert(record);
      },
      message: () => invitationMail(this.ports.publicUrl, record, board.name, token, inviter?.email),
    });
    const data = { email, role: record.role, replaces: earlier.map((i) => i._id) };
    await this.ports.audit(
      sharingRow(
        { by: identity, now, origin },
        { action: 'invitation.create', projectId: board.id, key: record._id, target: `invitation:${record._id}`, data },
      ),
    );
    return invitationView(record, now);
  }

  /** Kills the link. Revoking twice is fine (audited once: invitation.revoke); an accepted invitation is closed (remove the member instead). */
  async revoke(
    identity: Identity,
    projectId: string,
    invitationId: string,
    now: number,
    origin: RequestOrigin,
  ): Promise<InvitationView> {
    const board = await boardFor(this.ports, identity, projectId, 'admin');
    let revokedHere = false;
    const updated = await modify(this.ports.store.invitations, this.existing(invitationId), (i) => {
      this.manageable(i, board.id, board.role);
      revokedHere = false;
      if (i.status === 'revoked') return null;
      if (i.status === 'accepted')
        throw new AppError('INVITATION_CLOSED', 'This invitation was accepted; remove the member instead.');
      revokedHere = true;
      return { status: 'revoked' as const };
    });
    if (!updated) throw new AppError('INVITATION_NOT_FOUND');
    if (revokedHere) {
      const data = { email: updated.email, role: updated.role };
      await this.ports.audit(
        sharingRow(
          { by: identity, now, origin },
          {
            action: 'invitation.revoke',
            projectId: board.id,
            key: updated._id,
            target: `invitation:${updated._id}`,
            data,
          },
        ),
      );
    }
    return invitationView(updated, now);
  }

  /** A new link for a pending (or expired) invitation: the old link dies, the seven days restart. The mail counts like an invitation's. */
  async resend(identity: Identity, projectId: string, invitationId: string, now: number): Promise<InvitationView> {
    const board = await boardFor(this.ports, identity, projectId, 'admin');
    const { store } = this.ports;
    const id = this.existing(invitationId);
    const [current, project, inviter] = await Promise.all([
      store.invitations.get(id),
      store.projects.get(board.id),
      store.accounts.get(identity.accountId),
    ]);
    if (!current || !project) throw new AppError('INVITATION_NOT_FOUND');
    const token = newSecret(32);
    const open = (i: InvitationRecord): void => {
      this.manageable(i, board.id, board.role);
      if (i.status !== 'pending')
        throw new AppError('INVITATION_CLOSED', `This invitation was ${i.status}; send a new one.`);
    };
    const updated = await this.mail.send({
      projectId: board.id,
      kind: 'resend',
      to: current.email,
      now,
      check: async () => {
        const i = await store.invitations.get(id);
        if (!i) throw new AppError('INVITATION_NOT_FOUND');
        open(i);
        if (!(await backed(store, i, project))) throw new AppError('INVALID_LINK_TOKEN', INVITER_GONE);
      },
      write: async () => {
        const changed = await modify(
          store.invitations,
          id,
          (i) => (open(i), { tokenHash: sha256(token), expiresAt: now + SHARING_TTL_MS }),
        );
        if (!changed) throw new AppError('INVITATION_NOT_FOUND');
        return changed;
      },
      message: (changed) => invitationMail(this.ports.publicUrl, changed, board.name, token, inviter?.email),
    });
    return invitationView(updated, now);
  }

  /**
   * The invitation as its invited address sees it (board name, role, who invited, status), so the
   * page can say what accepting does; any other account gets INVITATION_EMAIL_MISMATCH, and the
   * invited one EMAIL_NOT_VERIFIED until it confirmed its address.
   */
  async preview(identity: Identity, invitationId: string, now: number): Promise<InvitationPreview> {
    const { store } = this.ports;
    const invitation = await store.invitations.get(this.existing(invitationId));
    const project = invitation ? await store.projects.get(invitation.projectId) : null;
    if (!invitation || !project) throw new AppError('INVITATION_NOT_FOUND');
    const [account, inviter] = await Promise.all([
      store.accounts.get(identity.accountId),
      store.accounts.get(invitation.invitedBy),
    ]);
    if (!account) throw new AppError('UNAUTHENTICATED');
    if (account.email !== invitation.email)
      throw new AppError(
        'INVITATION_EMAIL_MISMATCH',
        `This invitation was sent to another address than the one you are signed in with (${account.email}).`,
      );
    if (!account.emailVerified) throw new AppError('EMAIL_NOT_VERIFIED', NOT_VERIFIED(account.email));
    return {
      invitationId: invitation._id,
      projectId: project._id,
      name: project.name,
      role: invitation.role,
      email: invitation.email,
      invitedBy: inviter?.email ?? null,
      status: statusOf(invitation, now),
      expiresAt: new Date(invitation.expiresAt).toISOString(),
    };
  }

  /**
   * Accepts with the link's token, signed in as the invited address, confirmed. Refusals in this
   * order: unknown invitation, wrong or replaced token, revoked or used link, expired link, another
   * address, an unconfirmed address, a sender no longer entitled to invite, a full board. The
   * invitation is then taken with a version check, and only that makes the link single-use: of
   * two accepts of one link (one account on two sessions, or two accounts that held the invited
   * address in turn) the second always finds it used, whatever became of the first's membership.
   * The membership is written after; a failed write (already a member included) puts the link back.
   * The membership that stands is audited (invitation.accept).
   */
  async accept(
    identity: Identity,
    invitationId: string,
    token: string,
    now: number,
    origin: RequestOrigin,
  ): Promise<Accepted> {
    const { store } = this.ports;
    const invitation = await store.invitations.get(this.existing(invitationId));
    if (!invitation) throw new AppError('INVITATION_NOT_FOUND');
    if (!sameDigest(sha256(token), invitation.tokenHash))
      throw new AppError(
        'INVALID_LINK_TOKEN',
        'This link is not the invitation’s current one (a newer one was sent, or it was mistyped).',
      );
    if (invitation.status === 'revoked') throw new AppError('INVALID_LINK_TOKEN', 'This invitation was revoked.');
    if (invitation.status === 'accepted')
      throw new AppError('INVALID_LINK_TOKEN', 'This invitation was already accepted.');
    if (invitation.expiresAt <= now)
      throw new AppError('EXPIRED_TOKEN', 'This invitation link has expired; ask for a new one.');
    const [account, project] = await Promise.all([
      store.accounts.get(identity.accountId),
      store.projects.get(invitation.projectId),
    ]);
    if (!account) throw new AppError('UNAUTHENTICATED');
    if (!project) throw new AppError('INVITATION_NOT_FOUND', 'The board of this invitation no longer exists.');
    if (account.email !== invitation.email) {
      throw new AppError(
        'INVITATION_EMAIL_MISMATCH',
        `This invitation was sent to another address than the one you are signed in with (${account.email}).`,
      );
    }
    // The link may have been forwarded: only someone who proved they read the invited address's mail joins as it.
    if (!account.emailVerified) throw new AppError('EMAIL_NOT_VERIFIED', NOT_VERIFIED(account.email));
    if (!(await backed(store, invitation, project))) throw new AppError('INVALID_LINK_TOKEN', INVITER_GONE);
    const memberId = `${project._id}:${account._id}`;
    // Invitations are capped when sent, but many may be out at once: the cap holds when they are used.
    if ((await store.members.count({ projectId: project._id })) >= MAX_MEMBERS) throw membersFull();
    const taken = await store.invitations.update(invitation._id, invitation.version, {
      status: 'accepted',
      acceptedBy: account._id,
      acceptedAt: now,
    });
    if (!taken) throw new AppError('INVALID_LINK_TOKEN', 'This invitation was accepted, revoked or resent meanwhile.');
    try {
      await store.members.insert({
        _id: memberId,
        version: 1,
        projectId: project._id,
        accountId: account._id,
        role: invitation.role,
        acceptedAt: now,
      });
    } catch (e) {
      // Nothing was given, so the link is not spent: it goes back to pending (version-checked against the take).
      await store.invitations
        .update(taken._id, taken.version, { status: 'pending', acceptedBy: null, acceptedAt: null })
        .catch(() => null);
      if (e instanceof DuplicateKeyError)
        throw new AppError('ALREADY_MEMBER', 'You are already a member of this board.');
      throw e;
    }
    if ((await store.members.count({ projectId: project._id })) > MAX_MEMBERS) {
      // Concurrent accepts passed the count together: this one steps back (it may be retried).
      await store.members.delete(memberId, 1);
      await store.invitations
        .update(taken._id, taken.version, { status: 'pending', acceptedBy: null, acceptedAt: null })
        .catch(() => null);
      throw membersFull();
    }
    const data = { role: invitation.role, invitedBy: invitation.invitedBy };
    await this.ports.audit(
      sharingRow(
        { by: identity, now, origin },
        {
          action: 'invitation.accept',
          projectId: project._id,
          key: invitation._id,
          target: `invitation:${invitation._id}`,
          data,
        },
      ),
    );
    return { invitationId: invitation._id, projectId: project._id, name: project.name, role: invitation.role };
  }

  /** An id of ours, or nothing to find. */
  private existing(invitationId: string): string {
    if (!RECORD_ID.test(invitationId)) throw new AppError('INVITATION_NOT_FOUND');
    return invitationId;
  }

  /** The invitation belongs to this board, and the caller may make it (admin invitations are the owner's). */
  private manageable(i: InvitationRecord, projectId: string, role: string): void {
    if (i.projectId !== projectId) throw new AppError('INVITATION_NOT_FOUND');
    if (i.role === 'admin' && role !== 'owner')
      throw new AppError('ROLE_REQUIRED', 'Only the board’s owner manages admin invitations.', {
        role,
        needed: 'owner',
      });
  }
}

/** The invitation's mail: who invites, to which board, as what, and the link with its token. */
function invitationMail(
  publicUrl: string,
  i: InvitationRecord,
  boardName: string,
  token: string,
  inviterEmail: string | undefined,
): MailMessage {
  const link = `${publicUrl}/invitations/${i._id}#token=${token}`;
  return {
    to: i.email,
    subject: `Invitation to the board “${boardName}”`,
    text:
      `${inviterEmail ?? 'A board owner'} invites you to the board “${boardName}” as ${i.role}.\n` +
      `Accept within 7 days, signed in as ${i.email}: ${link}\n` +
      'The link works once. If you did not expect this, ignore this mail.',
  };
}

const membersFull = (): AppError =>
  new AppError('INVITATION_LIMIT', `A board has at most ${MAX_MEMBERS} members; ask its admins to make room.`, {
    limit: MAX_MEMBERS,
  });
const NOT_VERIFIED = (email: string): string =>
  `Confirm your address first: open the confirmation link mailed to ${email} when you signed up (or last changed your email), then accept again.`;
const INVITER_GONE =
  'Whoever sent this invitation can no longer invite to this board (they left it, or their role was lowered); ask its admins for a new invitation.';

/**
 * Whether the invitation still speaks for the board: whoever sent it is still on it as an admin or
 * the owner (the owner, for an admin invitation). A link outlives nobody's authority.
 */
async function backed(
  store: Pick<Store, 'members'>,
  i: InvitationRecord,
  project: Pick<ProjectRecord, 'ownerId'>,
): Promise<boolean> {
  const role = roleOn(project, i.invitedBy, await store.members.get(`${i.projectId}:${i.invitedBy}`));
  return role !== null && atLeast(role, i.role === 'admin' ? 'owner' : 'admin');
}

/** Revokes the pending invitations `accountId` sent on the board (of the given roles, else all): they left it or may no longer send them. */
export async function revokeInvitationsOf(
  store: Pick<Store, 'invitations'>,
  projectId: string,
  accountId: string,
  roles?: readonly InvitedRole[],
): Promise<void> {
  for (const i of await store.invitations.find({ projectId, invitedBy: accountId, status: 'pending' })) {
    if (!roles || roles.includes(i.role))
      await modify(store.invitations, i._id, (c) => (c.status === 'pending' ? { status: 'revoked' as const } : null));
  }
}
