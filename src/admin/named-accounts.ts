// The accounts an operator's page names (an audit row's actor, target and impersonating operator,
// an abuse report's principals), by their address: operators know accounts by email, not by id.
// One read per page, whatever the number of rows.
import type { Store } from '../../store/ports/store.js';

export interface NamedAccount {
  /** Null once the account is purged: its id is all that is left. */
  email: string | null;
  /** Deleted (by its owner or an operator), restorable or purged. */
  deleted: boolean;
}

/** The account a principal or an audit target names (`user:<id>`, `account:<id>`), else null. */
export const accountIdOf = (value: string | null): string | null =>
  value === null ? null : (/^(?:user|account):(.+)$/s.exec(value)?.[1] ?? null);

/** Each of `ids`' address and whether it was deleted, in one read, keyed by account id. */
export async function namedAccounts(
  store: Pick<Store, 'accounts'>,
  ids: Iterable<string | null>,
): Promise<Record<string, NamedAccount>> {
  const wanted = [...new Set([...ids].filter((id): id is string => id !== null))];
  if (!wanted.length) return {};
  const found = new Map(
    (await store.accounts.select({ _id: { $in: wanted } }, ['email', 'deletedAt'])).map((a) => [a._id, a]),
  );
  return Object.fromEntries(
    wanted.map((id) => {
      const account = found.get(id);
      return [id, { email: account?.email ?? null, deleted: !account || account.deletedAt != null }];
    }),
  );
}
