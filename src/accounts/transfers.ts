// Board ownership transfers (DOMAIN.md "Sharing"): the owner offers the board to an accepted member
// for 7 days (a new offer replaces the open one); the recipient accepts within their board limit,
// becomes owner, and the previous owner stays on as admin. The board's billing stays with the
// board: its subscription and customer are not touched, only whose account answers for them.
// An offer and an accept are each audited (transfer.offer, transfer.accept) once made.
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import type { Identity } from '../auth/identity.js';
import {
  modify,
  type MemberRecord,
  type ProjectRecord,
  type Store,
  type TransferRecord,
} from '../../store/ports/store.js';
import { ensureRoom } from './projects.js';
import { withAccountLock } from './account-lock.js';
import { revokeInvitationsOf } from './invitations.js';
import type { SharingMail } from './sharing-mail.js';
import {
  boardFor,
  iso,
  KEEP_CLOSED_MS,
  RECORD_ID,
  SHARING_TTL_MS,
  sharingRow,
  type SharingChange,
  type SharingPorts,
} from './sharing.js';
import type { RequestOrigin } from '../audit-row.js';

export interface TransferView {
  transferId: string;
  projectId: string;
  fromUserId: string;
  toUserId: string;
  status: TransferRecord['status'] | 'expired';
  createdAt: string;
  expiresAt: string;
}

export function transferView(t: TransferRecord, now: number): TransferView {
  return {
    transferId: t._id,
    projectId: t.projectId,
    fromUserId: t.fromAccountId,
    toUserId: t.toAccountId,
    status: t.status === 'pending' && t.expiresAt <= now ? 'expired' : t.status,
    createdAt: iso(t.createdAt)!,
    expiresAt: iso(t.expiresAt)!,
  };
}

export class Transfers {
  constructor(
    private readonly ports: SharingPorts,
    private readonly mail: SharingMail,
  ) {}

  /** Offers the board to `toUserId`, an accepted member other than the owner; the recipient is mailed. */
  async open(
    identity: Identity,
    projectId: string,
    toUserId: string,
    now: number,
    origin: RequestOrigin,
  ): Promise<TransferView> {
    const board = await boardFor(this.ports, identity, projectId, 'owner');
    const { store } = this.ports;
    if (toUserId === identity.accountId)
      throw new AppError('INVALID_INPUT', 'body.toUserId: you already own this board; name another member.', {
        field: 'body.toUserId',
      });
    const recipient = RECORD_ID.test(toUserId) ? await store.members.get(`${board.id}:${toUserId}`) : null;
    const account = recipient ? await store.accounts.get(toUserId) : null;
    if (!recipient || !account)
      throw new AppError('MEMBER_NOT_FOUND', 'The recipient must be an accepted member of the board.');
    const record: TransferRecord = {
      _id: randomUUID(),
      version: 1,
      projectId: board.id,
      fromAccountId: identity.accountId,
      toAccountId: toUserId,
      createdAt: now,
      expiresAt: now + SHARING_TTL_MS,
      status: 'pending',
    };
    const owner = await store.accounts.get(identity.accountId);
    // An offer is mailed: it draws on the board's sharing-mail budget like an invitation.
    await this.mail.send({
      projectId: board.id,
      kind: 'transfer',
      to: account.email,
      now,
      write: async () => {
        await store.transfers.deleteMany({ projectId: board.id, expiresAt: { $lt: now - KEEP_CLOSED_MS } });
        for (const t of await store.transfers.find({ projectId: board.id, status: 'pending' })) {
          await modify(store.transfers, t._id, (c) =>
            c.status === 'pending' ? { status: 'cancelled' as const } : null,
          );
        }
        await store.transfers.insert(record);
      },
      message: () => ({
        to: account.email,
        subject: `Take over the board “${board.name}”`,
        text:
          `${owner?.email ?? 'The owner'} offers you ownership of the board “${board.name}”.\n` +
          `Accept within 7 days on the board's members page: ${this.ports.publicUrl}/boards/${board.id}/members\n` +
          'As owner you answer for its members, billing and deletion; the previous owner stays on as admin.',
      }),
    });
    const data = { transferId: record._id, from: record.fromAccountId, to: toUserId };
    await this.ports.audit(
      sharingRow(
        { by: identity, now, origin },
        { action: 'transfer.offer', projectId: board.id, key: record._id, target: `transfer:${record._id}`, data },
      ),
    );
    return transferView(record, now);
  }

  /**
   * The recipient takes the board: within their board limit (403 FREE_PROJECT_LIMIT), only while
   * the offer is open, the sender still owns the board and the recipient is still a member. The
   * transfer is taken with a version check first, so it is accepted once. An accepted transfer
   * whose moves were cut short (a store failure part-way) is finished by the recipient accepting
   * again: every move is idempotent, and a transfer no longer the board's newest is not finished.
   */
  async accept(
    identity: Identity,
    transferId: string,
    now: number,
    origin: RequestOrigin,
  ): Promise<TransferView & { name: string }> {
    const change: SharingChange = { by: identity, now, origin };
    const { store } = this.ports;
    const seen = RECORD_ID.test(transferId) ? await store.transfers.get(transferId) : null;
    if (!seen || seen.toAccountId !== identity.accountId || seen.status === 'cancelled')
      throw new AppError('TRANSFER_NOT_FOUND');
    return withAccountLock(store, identity.accountId, async () => {
      const transfer = await store.transfers.get(seen._id);
      const project = transfer ? await store.projects.get(transfer.projectId) : null;
      if (!transfer || !project) throw new AppError('TRANSFER_NOT_FOUND');
      if (transfer.status === 'accepted') return this.resume(change, transfer, project);
      if (transfer.status !== 'pending') throw new AppError('TRANSFER_NOT_FOUND');
      if (transfer.expiresAt <= now)
        throw new AppError('TRANSFER_NOT_FOUND', 'This transfer expired; ask the owner to offer the board again.');
      const member = await store.members.get(`${project._id}:${identity.accountId}`);
      if (project.ownerId !== transfer.fromAccountId || !member)
        throw new AppError('TRANSFER_NOT_FOUND', 'The board changed hands or members since this transfer was offered.');
      await ensureRoom(store, identity.accountId, project.plan === 'pro');
      const taken = await store.transfers.update(transfer._id, transfer.version, { status: 'accepted' });
      if (!taken) throw new AppError('TRANSFER_NOT_FOUND', 'This transfer was accepted or cancelled meanwhile.');
      return this.complete(change, taken, project);
    });
  }

  /** An accepted transfer again: finished when cut short, else there is nothing left to accept. */
  private async resume(
    change: SharingChange,
    transfer: TransferRecord,
    project: ProjectRecord,
  ): Promise<TransferView & { name: string }> {
    const { store } = this.ports;
    const identity = change.by;
    const to = `${project._id}:${identity.accountId}`;
    if ((await lastTransfer(store, project._id))?._id !== transfer._id) {
      // Another transfer came since: this one will not move anything any more.
      if (project.ownerId !== identity.accountId)
        await modify(store.members, to, (m) => (m.role === 'owner' ? { role: 'admin' as const } : null));
      throw new AppError('TRANSFER_NOT_FOUND', 'This transfer was overtaken by a newer one.');
    }
    if (project.ownerId === identity.accountId && !(await unfinished(store, project, transfer)))
      throw new AppError('TRANSFER_NOT_FOUND', 'This transfer was accepted already.');
    if (project.ownerId === transfer.fromAccountId) await ensureRoom(store, identity.accountId, project.plan === 'pro');
    return this.complete(change, transfer, project);
  }

  /**
   * The moves, under the recipient's account lock and within their limit, each one idempotent.
   * The recipient's membership becomes owner first, version-checked, so a removal racing the
   * accept either lands first (the transfer is cancelled) or finds an owner it may not remove;
   * only then does projects.ownerId (which alone says who owns, src/auth/project-selection.ts)
   * move; then every other membership saying owner steps down to admin, and billing follows.
   * The row comes last, keyed by the transfer: an accept finished by a retry writes it once.
   */
  private async complete(
    change: SharingChange,
    taken: TransferRecord,
    project: ProjectRecord,
  ): Promise<TransferView & { name: string }> {
    const { store } = this.ports;
    const identity = change.by;
    const memberId = `${project._id}:${identity.accountId}`;
    const prior: { role: MemberRecord['role'] } = { role: 'owner' };
    const promoted = await modify(store.members, memberId, (m) => {
      prior.role = m.role;
      return m.role === 'owner' ? null : { role: 'owner' as const };
    });
    if (!promoted) {
      await store.transfers.update(taken._id, taken.version, { status: 'cancelled' as const });
      throw new AppError('TRANSFER_NOT_FOUND', 'You are no longer a member of this board.');
    }
    const moved = await modify(store.projects, project._id, (p) =>
      p.ownerId === taken.fromAccountId ? { ownerId: identity.accountId } : null,
    );
    if (moved?.ownerId !== identity.accountId) {
      // Someone else owns it now: the membership goes back (a promotion left by an earlier attempt counted as admin).
      const back = prior.role === 'owner' ? 'admin' : prior.role;
      await modify(store.members, memberId, (m) => (m.role === 'owner' ? { role: back } : null));
      await store.transfers.update(taken._id, taken.version, { status: 'cancelled' as const });
      throw new AppError('TRANSFER_NOT_FOUND', 'The board changed hands meanwhile.');
    }
    for (const m of await store.members.find({ projectId: project._id, role: 'owner' })) {
      if (m.accountId !== identity.accountId)
        await modify(store.members, m._id, (c) => (c.role === 'owner' ? { role: 'admin' as const } : null));
    }
    // Admin invitations are the owner's to send: the previous owner's pending ones die with their ownership.
    await revokeInvitationsOf(store, project._id, taken.fromAccountId, ['admin']);
    await modify(store.billing, project._id, (b) =>
      b.accountId === identity.accountId ? null : { accountId: identity.accountId },
    );
    this.ports.membership({ kind: 'membership', boardId: project._id, accountId: identity.accountId, role: 'owner' });
    this.ports.membership({ kind: 'membership', boardId: project._id, accountId: taken.fromAccountId, role: 'admin' });
    const data = { transferId: taken._id, from: taken.fromAccountId, to: identity.accountId };
    await this.ports.audit(
      sharingRow(change, {
        action: 'transfer.accept',
        projectId: project._id,
        key: taken._id,
        target: `transfer:${taken._id}`,
        data,
      }),
    );
    return { ...transferView(taken, change.now), name: project.name };
  }
}

/** The transfer offered last on a board: only that one may still move its ownership. */
export async function lastTransfer(store: Store, projectId: string): Promise<TransferRecord | undefined> {
  return (
    await store.transfers.find(
      { projectId },
      {
        sort: [
          ['createdAt', -1],
          ['_id', -1],
        ],
        limit: 1,
      },
    )
  )[0];
}

/** Whether an accepted transfer still has moves to make: a failure cut its accept short, and the recipient's next accept finishes it. */
export async function unfinished(
  store: Store,
  project: Pick<ProjectRecord, '_id' | 'ownerId'>,
  t: TransferRecord,
): Promise<boolean> {
  if (t.status !== 'accepted') return false;
  if (project.ownerId === t.fromAccountId) return true;
  if (project.ownerId !== t.toAccountId) return false;
  const [owners, billing] = await Promise.all([
    store.members.find({ projectId: project._id, role: 'owner' }),
    store.billing.get(project._id),
  ]);
  return !(
    owners.length === 1 &&
    owners[0]!.accountId === t.toAccountId &&
    (!billing || billing.accountId === t.toAccountId)
  );
}

/**
 * Whether `accountId`, whose membership says owner while the board's owner is someone else, is
 * taking the board over: the board's newest transfer is theirs and accepted, and a retried accept
 * would finish it. Such a membership is not removed or changed meanwhile.
 */
export async function takingOver(
  store: Store,
  project: Pick<ProjectRecord, '_id' | 'ownerId'>,
  accountId: string,
): Promise<boolean> {
  if (project.ownerId === accountId) return false;
  const last = await lastTransfer(store, project._id);
  return last?.toAccountId === accountId && last.status === 'accepted';
}
