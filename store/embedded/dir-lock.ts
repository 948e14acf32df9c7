// One process per data directory, held by a lock the kernel releases when the holder dies: a
// Linux abstract-namespace socket named after the directory's device and inode. Binding it is
// atomic, so of two processes starting at the same instant exactly one wins, and a restart right
// after `kill -9` finds the name free at once. The holder answers a connection with its pid so
// the refusal can name it. Elsewhere (no abstract sockets) the directory is opened unlocked:
// LMDB itself stays consistent with several processes, but they would serve the same boards apart.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';

export interface DirLock {
  release(): Promise<void>;
}

export class DirInUseError extends Error {
  constructor(dir: string, holder: string) {
    super(`DATA_DIR ${dir} is in use by ${holder}; the embedded store serves one process at a time`);
    this.name = 'DirInUseError';
  }
}

export async function lockDir(dir: string): Promise<DirLock> {
  if (process.platform !== 'linux') return { release: async () => undefined };
  const { dev, ino } = await stat(dir);
  const name = `\0agent-board-data-dir:${createHash('sha256').update(`${dev}:${ino}`).digest('hex').slice(0, 32)}`;
  const server = createServer((socket) => socket.end(`${process.pid}\n`));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ path: name }, resolve);
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    throw new DirInUseError(dir, await holderOf(name));
  }
  server.unref();
  return { release: () => close(server) };
}

function holderOf(name: string): Promise<string> {
  return new Promise((resolve) => {
    let said = '';
    const socket = connect({ path: name });
    const done = () => resolve(/^\d+\n$/.test(said) ? `process ${said.trim()}` : 'another process');
    socket.setTimeout(500, () => socket.destroy());
    socket.on('data', (d: Buffer) => (said += d.toString()));
    socket.on('close', done);
    socket.on('error', () => undefined);
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
