// Unique names and throwaway directories for tests.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export const unique = (prefix: string): string => `${prefix}_${randomBytes(5).toString('hex')}`;

export interface TempDir {
  path: string;
  remove: () => Promise<void>;
}

export async function tempDir(): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), 'board-test-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
