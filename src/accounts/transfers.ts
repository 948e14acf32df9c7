// Board ownership transfers (DOMAIN.md "Sharing"): the owner offers the board to an accepted member
// for 7 days (a new offer replaces the open one); the recipient accepts within their board limit,
// becomes owner, and the previous owner stays on as admin. The board's billing stays with the
// board: its subscription and customer are not touched, only whose account answers for them.
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import type { Identity } from '../auth/identity.js';
import { modify, type MemberRecord, type ProjectRecord, type TransferRecord } from '../../store/ports/store.js';
import { ensureRoom } from './projects.js';
import { withAccountLock } from './account-lock.js';
import { boardFor, iso, KEEP_CLOSED_MS, RECORD_ID, SHARING_TTL_MS, type SharingPorts } from './sharing.js';

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
  constructor(private readonly ports: SharingPorts) {}

  /** Offers the board to `toUserId`, an accepted member other than the owner; the recipient is mailed. */
  async open(identity: Identity, projectId: string, toUserId: string, now: number): Promise<TransferView> {
    const board = await boardFor(this.ports, identity, projectId, 'owner');
    const { store } = this.ports;
    if (toUserId === identity.accountId) throw new AppError('INVALID_INPUT', 'body.toUserId: you already own this board; name another member.', { field: 'body.toUserId' });
    const recipient = RECORD_ID.test(toUserId) ? await store.members.get(`${board.id}:${toUserId}`) : null;
    const account = recipient ? await store.accounts.get(toUserId) : null;
    if (!recipient || !account) throw new AppError('MEMBER_NOT_FOUND', 'The recipient must be an accepted member of the board.');
    await store.transfers.deleteMany({ projectId: board.id, expiresAt: { $lt: now - KEEP_CLOSED_MS } });
    for (const t of await store.transfers.find({ projectId: board.id, status: 'pending' })) {
      await modify(store.transfers, t._id, (c) => (c.status === 'pending' ? { status: 'cancelled' as const } : null));
    }
    const record: TransferRecord = { _id: randomUUID(), version: 1, projectId: board.id, fromAccountId: identity.accountId, toAccountId: toUserId, createdAt: now, expiresAt: now + SHARING_TTL_MS, status: 'pending' };
    await store.transfers.insert(record);
    const owner = await store.accounts.get(identity.accountId);
    await this.ports.mailer.send({
      to: account.email,
      subject: `Take over the board “${board.name}”`,
      text:
        `${owner?.email ?? 'The owner'} offers you ownership of the board “${board.name}”.\n` +
        `Accept within 7 days on the board's members page: ${this.ports.publicUrl}/boards/${board.id}/members\n` +
        'As owner you answer for its members, billing and deletion; the previous owner stays on as admin.',
    });
    return transferView(record, now);
  }

  /**
   * The recipient takes the board: within their board limit (403 FREE_PROJECT_LIMIT), only while
   * the offer is open, the sender still owns the board and the recipient is still a member. The
   * transfer is taken with a version check first, so it is accepted once.
   */
  async accept(identity: Identity, transferId: string, now: number): Promise<TransferView & { name: string }> {
    const { store } = this.ports;
    const transfer = RECORD_ID.test(transferId) ? await store.transfers.get(transferId) : null;
    if (!transfer || transfer.toAccountId !== identity.accountId || transfer.status !== 'pending') throw new AppError('TRANSFER_NOT_FOUND');
    if (transfer.expiresAt <= now) throw new AppError('TRANSFER_NOT_FOUND', 'This transfer expired; ask the owner to offer the board again.');
    const [project, member] = await Promise.all([store.projects.get(transfer.projectId), store.members.get(`${transfer.projectId}:${identity.accountId}`)]);
    if (!project || project.ownerId !== transfer.fromAccountId || !member) throw new AppError('TRANSFER_NOT_FOUND', 'The board changed hands or members since this transfer was offered.');
    return withAccountLock(store, identity.accountId, async () => {
      await ensureRoom(store, identity.accountId, project.plan === 'pro');
      return this.take(identity, transfer, project, now);
    });
  }

  /**
   * The move itself, under the recipient's account lock and within their limit. The recipient's
   * membership becomes owner first, version-checked, so a removal racing the accept either lands
   * first (the transfer is cancelled) or finds an owner it may not remove; only then does the board
   * change owner, and the previous owner steps down to admin.
   */
  private async take(identity: Identity, transfer: TransferRecord, project: ProjectRecord, now: number): Promise<TransferView & { name: string }> {
    const { store } = this.ports;
    const taken = await store.transfers.update(transfer._id, transfer.version, { status: 'accepted' });
    if (!taken) throw new AppError('TRANSFER_NOT_FOUND', 'This transfer was accepted or cancelled meanwhile.');
    const memberId = `${project._id}:${identity.accountId}`;
    let before: MemberRecord['role'] = 'owner';
    const promoted = await modify(store.members, memberId, (m) => {
      before = m.role;
      return m.role === 'owner' ? null : { role: 'owner' as const };
    });
    if (!promoted) {
      await store.transfers.update(taken._id, taken.version, { status: 'cancelled' as const });
      throw new AppError('TRANSFER_NOT_FOUND', 'You are no longer a member of this board.');
    }
    const moved = await modify(store.projects, project._id, (p) => (p.ownerId === transfer.fromAccountId ? { ownerId: identity.accountId } : null));
    if (moved?.ownerId !== identity.accountId) {
      await modify(store.members, memberId, (m) => (m.role === 'owner' && before !== 'owner' ? { role: before } : null));
      await store.transfers.update(taken._id, taken.version, { status: 'cancelled' as const });
      throw new AppError('TRANSFER_NOT_FOUND', 'The board changed hands meanwhile.');
    }
    await modify(store.members, `${project._id}:${transfer.fromAccountId}`, (m) => (m.role === 'owner' ? { role: 'admin' as const } : null));
    await modify(store.billing, project._id, (b) => (b.accountId === identity.accountId ? null : { accountId: identity.accountId }));
    this.ports.membership({ kind: 'membership', boardId: project._id, accountId: identity.accountId, role: 'owner' });
    this.ports.membership({ kind: 'membership', boardId: project._id, accountId: transfer.fromAccountId, role: 'admin' });
    return { ...transferView(taken, now), name: project.name };
  }
}
