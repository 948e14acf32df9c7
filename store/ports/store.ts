// The store port the rest of the service depends on.
import type { Collections } from './schema.js';

export interface Store extends Collections {
  readonly kind: 'embedded' | 'mongo';
  /** Resolves when the store answers; rejects otherwise. */
  ping(): Promise<void>;
  /** Flushes and releases everything; further calls fail. */
  close(): Promise<void>;
}

export * from './boards.js';
export * from './collection.js';
export * from './records.js';
export * from './schema.js';
export * from './modify.js';
