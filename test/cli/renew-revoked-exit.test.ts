// `agent-board renew` on a lease the board revoked (the item blocked under the holder: 200
// {revoked: true}) says "was revoked … stop work on it", exits 4 (conflict, as for an expired lease)
// and forgets the lease. It once exited 0 ("Done"), so `agent-board renew W-1 && …` carried on, and
// the lost lease stayed in the config.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tempDir, type TempDir } from '../support/temp.js';
import { run } from './run.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ BOARD_RATE_SCALE: '100' });
});
afterAll(async () => {
  await srv.stop();
});
const dirs: TempDir[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => d.remove()));
});
async function home(env: Record<string, string>): Promise<Record<string, string>> {
  const dir = await tempDir();
  dirs.push(dir);
  return { XDG_CONFIG_HOME: dir.path, ...env };
}
const tokenOf = (agent: { defaults: Record<string, string> }): string =>
  agent.defaults.authorization!.slice('Bearer '.length);

it('does not exit 0 when the renewal says the lease was revoked', async () => {
  const board = await newBoard(srv.url);
  const env = await home({ BOARD_URL: srv.url, BOARD_TOKEN: tokenOf(await board.agent('blocked-under')) });
  expect((await run(['items', 'add', 'to be blocked'], env)).code).toBe(0);
  expect((await run(['claim', 'W-1'], env)).code).toBe(0);
  const blocked = await board.owner.post(`/api/items/W-1/state?projectId=${board.projectId}`, {
    action: 'block',
    reason: 'wrong approach',
  });
  expect(blocked.status).toBe(200);
  const renewed = await run(['renew', 'W-1'], env);
  expect(renewed.stdout).toContain('was revoked');
  expect(renewed.code, 'a revoked lease reported with exit 0 ("Done")').not.toBe(0);
  expect(renewed.code).toBe(4);
  // Forgotten: the next renew finds no lease claimed from here.
  const again = await run(['renew', 'W-1'], env);
  expect(again.code).toBe(2);
  expect(again.stderr).toContain('no lease on W-1 was claimed from here');
}, 60_000);
