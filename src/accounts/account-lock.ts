// One owner-changing operation per account at a time, on every node: what an account owns is
// counted and changed under its lock, so concurrent creations, transfers and takeovers cannot pass
// the board limit together. The lock is a document whose insert only one caller wins; a lock left
// by a crashed holder is taken over once it lapsed (wall-clock time: it is operational, not domain).
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import { DuplicateKeyError, type Store } from '../../store/ports/store.js';

/** How long a holder may keep the lock before a waiter takes it over. */
export const LOCK_LEASE_MS = 10_000;
/** How long a caller waits for the lock before answering 503 ACCOUNT_BUSY. */
export const LOCK_WAIT_MS = 5_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function acquire(store: Pick<Store, 'accountLocks'>, accountId: string, holder: string): Promise<void> {
  const giveUp = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const now = Date.now();
    try {
      await store.accountLocks.insert({ _id: accountId, version: 1, holder, until: now + LOCK_LEASE_MS });
      return;
    } catch (e) {
      if (!(e instanceof DuplicateKeyError)) throw e;
    }
    const held = await store.accountLocks.get(accountId);
    if (
      held &&
      held.until < now &&
      (await store.accountLocks.update(accountId, held.version, { holder, until: now + LOCK_LEASE_MS }))
    )
      return;
    if (now > giveUp) throw new AppError('ACCOUNT_BUSY', undefined, undefined, { 'retry-after': '1' });
    await pause(5 + Math.random() * 20);
  }
}

async function release(store: Pick<Store, 'accountLocks'>, accountId: string, holder: string): Promise<void> {
  const held = await store.accountLocks.get(accountId);
  if (held?.holder === holder) await store.accountLocks.delete(accountId, held.version);
}

/** Runs `work` holding the account's lock. */
export async function withAccountLock<T>(
  store: Pick<Store, 'accountLocks'>,
  accountId: string,
  work: () => Promise<T>,
): Promise<T> {
  const holder = randomUUID();
  await acquire(store, accountId, holder);
  try {
    return await work();
  } finally {
    await release(store, accountId, holder);
  }
}
