// A board's members (DOMAIN.md "Sharing"): who is on it with which role (any member reads it; only
// admins and the owner read their addresses), role
// changes (the owner for changes to or from admin, admins for member and viewer) and removal
// (admins remove lower roles, anyone may leave; the owner stays). A change takes effect on the next
// request, since membership is read fresh every time; what outlives a request follows at once:
// the member's board tokens are revoked (removal) or narrowed (a lower role), and every node
// unsubscribes the member's sockets from the board. Each change is audited (member.role,
// member.remove), after it is made.
import { AppError } from '../errors/app-error.js';
import { atLeast, roleOn } from '../auth/project-selection.js';
import type { Identity, Role } from '../auth/identity.js';
import {
  modify,
  type AccountRecord,
  type MemberRecord,
  type ProjectRecord,
  type TokenRecord,
} from '../../store/ports/store.js';
import { below, boardFor, iso, RECORD_ID, sharingRow, type SharingPorts } from './sharing.js';
import type { RequestOrigin } from '../audit-row.js';
import { revokeInvitationsOf } from './invitations.js';
import { unstar } from './projects.js';
import { lastTransfer, takingOver, unfinished } from './transfers.js';

/** Members one listing shows (invitations stop well before: MAX_MEMBERS). */
const LIST_LIMIT = 1000;
const ORDER: Record<Role, number> = { owner: 0, admin: 1, member: 2, viewer: 3 };
const CHANGE_ATTEMPTS = 8;

export type MemberRole = Exclude<Role, 'owner'>;

export interface MemberView {
  userId: string;
  /** Shown to admins and the owner (and to each member about themselves); null for everyone else. */
  email: string | null;
  displayName: string | null;
  /** How to call them: the display name, else the email where it is shown, else a short id that stays the same. */
  name: string;
  role: Role;
  acceptedAt: string;
}

export interface OpenTransfer {
  transferId: string;
  fromUserId: string;
  toUserId: string;
  /** accepted: the recipient accepted and a failure cut the move short; accepting again finishes it. */
  status: 'pending' | 'accepted';
  expiresAt: string;
}

export interface MemberListing {
  projectId: string;
  name: string;
  /** The caller's own role. */
  role: Role;
  members: MemberView[];
  /** The board's open ownership transfer, if any. */
  transfer: OpenTransfer | null;
}

export class Members {
  constructor(private readonly ports: SharingPorts) {}

  /** Everyone on the board with their role: owner first, then by role, then by who joined first. */
  async list(identity: Identity, projectId: string, now: number): Promise<MemberListing> {
    const board = await boardFor(this.ports, identity, projectId, 'viewer');
    const { store } = this.ports;
    const [project, rows, last] = await Promise.all([
      this.project(board.id),
      store.members.find(
        { projectId: board.id },
        {
          sort: [
            ['acceptedAt', 1],
            ['_id', 1],
          ],
          limit: LIST_LIMIT,
        },
      ),
      lastTransfer(store, board.id),
    ]);
    const accounts = await Promise.all(rows.map((m) => store.accounts.get(m.accountId)));
    // Addresses are for those who manage the board; the others know each other by name.
    const operator = atLeast(board.role, 'admin');
    const members = rows.flatMap((m, i) => {
      const account = accounts[i];
      return account
        ? [describe(m, account, roleOn(project, m.accountId, m)!, operator || m.accountId === identity.accountId)]
        : [];
    });
    members.sort((a, b) => ORDER[a.role] - ORDER[b.role]);
    // An offer still open, or one accepted whose move a failure cut short (its recipient finishes it).
    const open =
      last && ((last.status === 'pending' && last.expiresAt > now) || (await unfinished(store, project, last)))
        ? last
        : null;
    return {
      projectId: board.id,
      name: board.name,
      role: board.role,
      members,
      transfer: open
        ? {
            transferId: open._id,
            fromUserId: open.fromAccountId,
            toUserId: open.toAccountId,
            status: open.status === 'accepted' ? 'accepted' : 'pending',
            expiresAt: iso(open.expiresAt)!,
          }
        : null,
    };
  }

  /** Changes a member's role; a lower role narrows their tokens for the board. */
  async setRole(
    identity: Identity,
    projectId: string,
    userId: string,
    role: MemberRole,
    now: number,
    origin: RequestOrigin,
  ): Promise<MemberView> {
    const board = await boardFor(this.ports, identity, projectId, 'admin');
    const { store } = this.ports;
    const id = this.memberId(board.id, userId);
    let before: Role = role;
    let updated: MemberRecord | null = null;
    for (let attempt = 0; !updated; attempt++) {
      const member = await store.members.get(id);
      if (!member) throw new AppError('MEMBER_NOT_FOUND');
      before = await this.standing(board.id, member);
      if ((before === 'admin' || role === 'admin') && board.role !== 'owner')
        throw new AppError('ROLE_REQUIRED', 'Only the board’s owner makes or unmakes admins.', {
          role: board.role,
          needed: 'owner',
        });
      if (member.role === role) return this.view(member);
      updated = await store.members.update(id, member.version, { role });
      if (!updated && attempt >= CHANGE_ATTEMPTS)
        throw new AppError('MEMBER_NOT_FOUND', 'The membership kept changing; read the members again.');
    }
    if (before !== role) {
      if (below(role, before)) await this.narrowTokens(board.id, userId, role);
      if (below(role, 'admin')) await revokeInvitationsOf(store, board.id, userId);
      this.ports.membership({ kind: 'membership', boardId: board.id, accountId: userId, role });
    }
    // The membership (who, since when) and its version name this change: a repeat that changed nothing returned above.
    const row = {
      action: 'member.role' as const,
      projectId: board.id,
      key: `${userId}:${updated.acceptedAt}:${updated.version}`,
      target: `account:${userId}`,
      data: { from: before, to: role },
    };
    await this.ports.audit(sharingRow({ by: identity, now, origin }, row));
    return this.view(updated);
  }

  /** Removes a member (or the caller themselves): their board tokens are revoked, their sockets leave the board. */
  async remove(
    identity: Identity,
    projectId: string,
    userId: string,
    now: number,
    origin: RequestOrigin,
  ): Promise<void> {
    const self = userId === identity.accountId;
    const board = await boardFor(this.ports, identity, projectId, self ? 'viewer' : 'admin');
    const { store } = this.ports;
    const id = this.memberId(board.id, userId);
    let removed: { role: Role; acceptedAt: number };
    for (let attempt = 0; ; attempt++) {
      const member = await store.members.get(id);
      if (!member) throw new AppError('MEMBER_NOT_FOUND');
      const role = await this.standing(board.id, member);
      if (!self && !below(role, board.role))
        throw new AppError('ROLE_REQUIRED', `Admins remove members of a lower role only; this one is ${role}.`, {
          role: board.role,
          needed: role === 'admin' ? 'owner' : 'admin',
        });
      removed = { role, acceptedAt: member.acceptedAt };
      if (await store.members.delete(id, member.version)) break;
      if (attempt >= CHANGE_ATTEMPTS)
        throw new AppError('MEMBER_NOT_FOUND', 'The membership kept changing; read the members again.');
    }
    await this.revokeTokens(board.id, userId);
    await revokeInvitationsOf(store, board.id, userId);
    this.ports.membership({ kind: 'membership', boardId: board.id, accountId: userId, role: null });
    for (const t of await store.transfers.find({ projectId: board.id, status: 'pending' })) {
      if (t.toAccountId === userId)
        await modify(store.transfers, t._id, (c) => (c.status === 'pending' ? { status: 'cancelled' as const } : null));
    }
    await unstar(store, userId, board.id);
    // One membership (who, since when) is removed once.
    const row = {
      action: 'member.remove' as const,
      projectId: board.id,
      key: `${userId}:${removed.acceptedAt}`,
      target: `account:${userId}`,
      data: { role: removed.role, self },
    };
    await this.ports.audit(sharingRow({ by: identity, now, origin }, row));
  }

  private async project(projectId: string): Promise<ProjectRecord> {
    const project = await this.ports.store.projects.get(projectId);
    if (!project)
      throw new AppError('PROJECT_SCOPE_DENIED', 'That board does not exist or this credential cannot reach it.');
    return project;
  }

  /**
   * The role a membership counts as (projects.ownerId alone says who owns), refusing the owner and
   * a member part-way through taking the board over (a retried accept finishes that): neither is
   * changed nor removed. A membership left saying owner by a transfer that will not finish is an admin's.
   */
  private async standing(projectId: string, member: MemberRecord): Promise<Role> {
    const project = await this.project(projectId);
    const role = roleOn(project, member.accountId, member)!;
    if (role === 'owner')
      throw new AppError('OWNER_IMMUTABLE', 'The owner is neither demoted nor removed; transfer the board first.');
    if (member.role === 'owner' && (await takingOver(this.ports.store, project, member.accountId))) {
      throw new AppError(
        'OWNER_IMMUTABLE',
        'This member is taking the board over (an accepted transfer); they become its owner.',
      );
    }
    return role;
  }

  private memberId(projectId: string, userId: string): string {
    if (!RECORD_ID.test(userId)) throw new AppError('MEMBER_NOT_FOUND');
    return `${projectId}:${userId}`;
  }

  private async boardTokens(projectId: string, accountId: string): Promise<TokenRecord[]> {
    return this.ports.store.tokens.find({ accountId, boardId: projectId, revoked: false });
  }

  private async revokeTokens(projectId: string, accountId: string): Promise<void> {
    for (const token of await this.boardTokens(projectId, accountId)) {
      await modify(this.ports.store.tokens, token._id, (t) => (t.revoked ? null : { revoked: true }));
      this.ports.revoke({ kind: 'revoked', tokenId: token._id });
    }
  }

  /** A token never acts above its account's role; a lowered member's tokens are lowered with it. */
  private async narrowTokens(projectId: string, accountId: string, role: MemberRole): Promise<void> {
    for (const token of await this.boardTokens(projectId, accountId)) {
      await modify(this.ports.store.tokens, token._id, (t) =>
        t.revoked || atLeast(role, t.role ?? 'member') ? null : { role },
      );
    }
  }

  /** A member as an admin or the owner sees them (role changes are theirs). */
  private async view(m: MemberRecord): Promise<MemberView> {
    const account = await this.ports.store.accounts.get(m.accountId);
    return describe(m, { email: account?.email ?? '', displayName: account?.displayName ?? null }, m.role, true);
  }
}

function describe(
  m: MemberRecord,
  account: Pick<AccountRecord, 'email' | 'displayName'>,
  role: Role,
  withEmail: boolean,
): MemberView {
  const email = withEmail ? account.email : null;
  return {
    userId: m.accountId,
    email,
    displayName: account.displayName,
    name: account.displayName ?? email ?? `member ${m.accountId.slice(0, 8)}`,
    role,
    acceptedAt: iso(m.acceptedAt)!,
  };
}
