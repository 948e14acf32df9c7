// One DATA_DIR, one process: two `npm start` processes started at the same instant never both
// serve it, the refused one says why in one line, and the directory survives every round intact
// (including restarts right after kill -9, which the kernel-released lock allows at once).
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../support/server.js';
import { runMain } from '../support/process.js';
import { tempDir, unique } from '../support/temp.js';

const ROUNDS = 50;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Run = ReturnType<typeof runMain>;

/** Resolves with the url once the process says it listens, or null once it exits without. */
function outcome(run: Run): Promise<string | null> {
  return new Promise((resolve) => {
    const check = () => {
      const m = /"port":(\d+).*"msg":"listening"/.exec(run.output());
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    };
    run.child.stdout!.on('data', check);
    void run.exited.then(() => resolve(null));
  });
}

describe('embedded store: one process per DATA_DIR', () => {
  it(`of two processes started at the same instant exactly one serves, ${ROUNDS} rounds, with nothing lost`, async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const env = { DATA_DIR: dir.path, ADDRESS_RATE_PER_MINUTE: '100000' };
    const written: { email: string; cookie: string }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const runs = [runMain(env), runMain(env)];
      for (const run of runs)
        cleanups.push(async () => (run.child.exitCode === null && run.child.kill('SIGKILL'), run.exited));
      const urls = await Promise.all(runs.map(outcome));
      const serving = urls.filter((u) => u !== null);
      expect(serving, `round ${round}: ${runs.map((r) => r.output()).join('\n---\n')}`).toHaveLength(1);
      const refused = runs[urls.indexOf(null)]!;
      expect(await refused.exited).toBe(1);
      const holder = runs[urls.indexOf(serving[0]!)]!;
      expect(refused.output()).toMatch(
        new RegExp(
          `^failed to start: DATA_DIR .* is in use by process ${holder.child.pid}; the embedded store serves one process at a time\\n$`,
        ),
      );

      // What every earlier round wrote is there, and this round adds its own.
      const client = new Client(serving[0]!);
      for (const w of written.slice(-3)) {
        const other = new Client(serving[0]!);
        other.cookies.set('board_session', w.cookie);
        expect((await other.get('/api/auth/me')).body.user?.email, `round ${round}`).toBe(w.email);
      }
      const email = `${unique('lock')}@example.com`;
      const res = await client.post('/api/auth/signup', { email, password: 'locked password 1' });
      expect(res.status).toBe(201);
      written.push({ email, cookie: client.cookies.get('board_session')! });
      // Alternate a hard kill and a clean stop: the next round must start at once either way.
      holder.child.kill(round % 2 ? 'SIGTERM' : 'SIGKILL');
      await holder.exited;
    }
    const last = runMain(env);
    cleanups.push(async () => (last.child.exitCode === null && last.child.kill('SIGKILL'), last.exited));
    const url = (await outcome(last))!;
    for (const w of written) {
      const client = new Client(url);
      client.cookies.set('board_session', w.cookie);
      expect((await client.get('/api/auth/me')).body.user?.email).toBe(w.email);
    }
  }, 600_000); // 50 rounds of two process starts: about 160 s, more on a loaded machine
});
