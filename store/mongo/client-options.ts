// What the store asks of a MongoDB deployment unless MONGODB_URI says otherwise, and which reads
// may follow the URI's read preference. The URI's own options always win (docs/operating.md,
// "MongoDB in production").
import type { MongoClientOptions } from 'mongodb';

/**
 * Collections whose reads decide nothing: the audit log, read only for operators' reports. It
 * follows the URI's readPreference (a secondary may answer). Every other read is from the primary,
 * whatever the URI says: a board's header and log, a credential's revocation, a budget, a lease, a
 * usage counter's read-modify-write, a provider event's "seen already", a feedback place, read
 * from a lagging secondary, would decide on the past.
 */
export const REPORT_COLLECTIONS: ReadonlySet<string> = new Set(['audit']);

/** The option names a connection string sets, lower-cased (the driver matches them so). */
export function optionsInUri(uri: string): Set<string> {
  const query = uri.includes('?') ? uri.slice(uri.indexOf('?') + 1) : '';
  return new Set([...new URLSearchParams(query).keys()].map((k) => k.toLowerCase()));
}

/**
 * The client's options: our defaults for what the URI leaves unsaid. A commit acknowledged to an
 * agent is on a majority of the replica set and in its journals, so a failover cannot take it back
 * (w=majority, journal=true); a write cut by a failover is retried once on the new primary
 * (retryWrites, which the driver uses only on a replica set or a sharded cluster).
 */
export function clientOptions(uri: string): MongoClientOptions {
  const given = optionsInUri(uri);
  const said = (...names: string[]) => names.some((n) => given.has(n.toLowerCase()));
  return {
    serverSelectionTimeoutMS: 5000,
    connectTimeoutMS: 5000,
    ...(!said('w', 'journal', 'j', 'wtimeoutMS') && { writeConcern: { w: 'majority', journal: true } }),
    ...(!said('retryWrites') && { retryWrites: true }),
  };
}
