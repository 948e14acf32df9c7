// What an embedded store's directory holds, read raw (the store closed): for tests of its value encodings.
import { open } from 'lmdb';

/** The first byte of each stored value of `name` (after the version, in a versioned database). */
export function firstBytes(path: string, name: string, versioned: boolean): number[] {
  const env = open({ path, noSubdir: false, maxDbs: 256, readOnly: true });
  const db = env.openDB({ name, encoding: 'binary' });
  const bytes = [...db.getRange({})].map(({ value }) => (value as Buffer)[versioned ? 8 : 0]!);
  void env.close();
  return bytes;
}
