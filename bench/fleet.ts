// npm run fleet [-- agents items]: the fleet simulation against a fresh server process (embedded
// store), printing claims per second and checking the event log's invariants.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFleet } from './fleet-sim.js';
import { freePort } from './free-port.js';

const agents = Number(process.argv[2] ?? 20);
const items = Number(process.argv[3] ?? 300);

const port = await freePort();
const dataDir = await mkdtemp(join(tmpdir(), 'fleet-'));
const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', BCRYPT_ROUNDS: '4', LEASE_MIN_TTL_SECONDS: '1' };
const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
const url = `http://127.0.0.1:${port}`;
try {
  for (let i = 0; !(await fetch(`${url}/readyz`).then((r) => r.ok, () => false)); i++) {
    if (i > 200) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const report = await runFleet({ baseUrls: [url], agents, items, timeoutMs: 600_000 });
  console.log(`${agents} agents, ${items} items: ${report.claims} claims in ${report.seconds.toFixed(1)} s = ${report.claimsPerSecond.toFixed(1)} claims/s`);
  console.log(`events ${report.events}, expiries ${report.expiries}, releases ${report.releases}, supersedes ${report.supersedes}, failed verifications ${report.failedVerifications}`);
  console.log(report.violations.length ? `VIOLATIONS:\n${report.violations.slice(0, 20).join('\n')}` : 'invariants hold: no overlapping holders, dependencies first, independent passes on final heads, no gap');
  process.exitCode = report.violations.length ? 1 : 0;
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await rm(dataDir, { recursive: true, force: true });
}
