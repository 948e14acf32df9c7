// One process per data directory, held by an advisory lock on DATA_DIR/serve.lock that the kernel
// releases the moment the holder dies. It is an open-file-description lock (fcntl F_OFD_SETLK on
// Linux, flock on macOS, through fs-native-extensions' prebuilt addon): it lives in the file
// system, not in a network namespace, so two containers or hosts sharing one volume (NFS forwards
// it as a POSIX lock) cannot both open the store, and a restart right after `kill -9` finds it
// free at once. Taking it is atomic: of two processes starting at the same instant exactly one
// wins. The holder writes its pid and host name into the file so a refusal can name it.
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';

export interface DirLock {
  release(): Promise<void>;
}

export class DirInUseError extends Error {
  constructor(dir: string, holder: string) {
    super(`DATA_DIR ${dir} is in use by ${holder}; the embedded store serves one process at a time`);
    this.name = 'DirInUseError';
  }
}

/** The lock file inside DATA_DIR (its content only names the holder; the lock is what counts). */
export const LOCK_FILE = 'serve.lock';

interface NativeLocks {
  /** False when another open file description holds the lock. */
  tryLock(fd: number): boolean;
  unlock(fd: number): void;
}

let native: NativeLocks | undefined;
function locks(): NativeLocks {
  // Loaded on first use (CommonJS addon); its prebuilt binaries cover Linux, macOS and Windows.
  native ??= createRequire(import.meta.url)('fs-native-extensions') as NativeLocks;
  return native;
}

export async function lockDir(dir: string): Promise<DirLock> {
  const path = join(dir, LOCK_FILE);
  // A plain fd, never a FileHandle: a FileHandle that is garbage-collected closes its fd, and
  // with it the lock. Node opens it close-on-exec, so a child process never inherits the lock.
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
  let held: boolean;
  try {
    held = locks().tryLock(fd);
  } catch (e) {
    closeSync(fd);
    const code = (e as NodeJS.ErrnoException).code ?? 'unknown';
    throw new Error(
      `DATA_DIR ${dir}: cannot lock ${LOCK_FILE} (${code}); the file system must support advisory locks`,
      { cause: e },
    );
  }
  if (!held) {
    closeSync(fd);
    throw new DirInUseError(dir, await holderOf(path));
  }
  const me = `${process.pid} ${hostname()}\n`;
  ftruncateSync(fd, 0);
  writeSync(fd, me, 0);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      locks().unlock(fd);
      closeSync(fd);
    },
  };
}

/**
 * "process 1234" on this host, "process 1234 on host h" elsewhere. The holder writes its name just
 * after taking the lock, so the file may still be empty or name the previous holder (a pid no
 * longer alive on this host): read again for a moment before saying "another process".
 */
async function holderOf(path: string): Promise<string> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const named = nameIn(path);
    if (named) return named;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return 'another process';
}

function nameIn(path: string): string | null {
  let said = '';
  try {
    said = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const m = /^(\d+) (\S+)\n$/.exec(said);
  if (!m) return null;
  const pid = Number(m[1]);
  if (m[2] !== hostname()) return `process ${pid} on host ${m[2]}`;
  return alive(pid) ? `process ${pid}` : null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
