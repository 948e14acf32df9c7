// The account lock on a real store: one holder at a time, a waiter goes on once it is released,
// and a lock a crashed holder left is taken over once it lapsed.
import { describe, expect, it } from 'vitest';
import { LOCK_LEASE_MS, withAccountLock } from '../../src/accounts/account-lock.js';
import { useStore } from '../support/stores.js';
import { unique } from '../support/temp.js';
import { pace } from '../support/until.js';

describe('account lock', () => {
  const used = useStore();

  it('runs one holder at a time, in turn', async () => {
    const account = unique('acc');
    let inside = 0;
    let most = 0;
    const work = async () => {
      most = Math.max(most, ++inside);
      await pace(20); // a while inside, so the others come to the lock while it is held
      inside--;
    };
    await Promise.all(Array.from({ length: 5 }, () => withAccountLock(used.store, account, work)));
    expect(most).toBe(1);
    expect(await used.store.accountLocks.get(account)).toBeNull(); // released
  });

  it('releases on failure, and takes over a lock whose holder crashed once it lapsed', async () => {
    const account = unique('acc');
    await expect(
      withAccountLock(used.store, account, () => Promise.reject(new Error('failed inside'))),
    ).rejects.toThrow('failed inside');
    expect(await used.store.accountLocks.get(account)).toBeNull();
    await used.store.accountLocks.insert({ _id: account, version: 1, holder: 'crashed', until: Date.now() - 1 });
    expect(await withAccountLock(used.store, account, async () => 'taken over')).toBe('taken over');
    expect(LOCK_LEASE_MS).toBeGreaterThan(1000);
  });
});
