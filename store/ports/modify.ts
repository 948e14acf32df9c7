// Read-modify-write on one document, retried when another writer moved its version first.
import type { Changes, Collection, Doc } from './collection.js';

export const MODIFY_ATTEMPTS = 8;

export class ContentionError extends Error {
  constructor(collection: string, id: string) {
    super(`${collection} ${id} kept changing under ${MODIFY_ATTEMPTS} attempts`);
    this.name = 'ContentionError';
  }
}

/**
 * Applies `change(current)` with the version check until it lands. Returns the new document,
 * or null when the document does not exist. `change` may throw to refuse, or answer null to
 * leave the document as it is (which is then returned); either way nothing is written.
 */
export async function modify<T extends Doc>(
  collection: Collection<T>,
  id: string,
  change: (current: T) => Changes<T> | null,
): Promise<T | null> {
  for (let attempt = 0; attempt < MODIFY_ATTEMPTS; attempt++) {
    const current = await collection.get(id);
    if (!current) return null;
    const changes = change(current);
    if (changes === null) return current;
    const updated = await collection.update(id, current.version, changes);
    if (updated) return updated;
  }
  throw new ContentionError(collection.constructor.name, id);
}
