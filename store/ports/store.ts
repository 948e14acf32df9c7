// The store port the rest of the service depends on.
import type { Collections } from './schema.js';

export interface Store extends Collections {
  readonly kind: 'embedded' | 'mongo';
  /** Resolves when the store answers; rejects otherwise. */
  ping(): Promise<void>;
  /** MongoDB: the deployment's replication as the server reports it (hello; replSetGetStatus where allowed). Absent on the embedded store. */
  replication?(): Promise<Record<string, unknown>>;
  /** Flushes and releases everything; further calls fail. */
  close(): Promise<void>;
}

export * from './boards.js';
export * from './collection.js';
export * from './records.js';
export * from './schema.js';
export * from './modify.js';
export * from './usage.js';
