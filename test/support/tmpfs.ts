// A small filesystem of its own for tests that fill a disk: a tmpfs, which mounting needs root for.
import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';

export interface Mounted {
  path: string;
  unmount(): Promise<void>;
}

/** Mounts a tmpfs of `bytes` at `path`; null where this process may not mount. */
export async function mountTmpfs(path: string, bytes: number): Promise<Mounted | null> {
  await mkdir(path, { recursive: true });
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', path], { encoding: 'utf8' });
  if (mounted.status !== 0) return null;
  return {
    path,
    async unmount() {
      spawnSync('umount', ['-l', path]);
    },
  };
}
