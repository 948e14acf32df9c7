// A MongoDB suite's own collections are named with a prefix of its own (openMongoStore's
// `prefix`), so suites share one database; this drops them after a test.
import type { Db } from 'mongodb';

/** Drops every collection of `db` whose name starts with `prefix`. */
export async function dropPrefixed(db: Db, prefix: string): Promise<void> {
  for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray())
    if (name.startsWith(prefix))
      await db
        .collection(name)
        .drop()
        .catch(() => undefined);
}
