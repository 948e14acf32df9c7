// npm run fleet [-- agents items]: the fleet simulation against a fresh server process (embedded
// store), printing claims per second and checking the event log's invariants.
import { runFleet } from './fleet-sim.js';
import { startNode } from './node.js';

const agents = Number(process.argv[2] ?? 20);
const items = Number(process.argv[3] ?? 300);

const node = await startNode({ LOG_LEVEL: 'warn' }); // quiet: the fleet's figures are its invariants, not its speed
try {
  const report = await runFleet({ baseUrls: [node.url], agents, items, timeoutMs: 600_000 });
  console.log(
    `${agents} agents, ${items} items: ${report.claims} claims in ${report.seconds.toFixed(1)} s = ${report.claimsPerSecond.toFixed(1)} claims/s`,
  );
  console.log(
    `events ${report.events}, expiries ${report.expiries}, releases ${report.releases}, supersedes ${report.supersedes}, failed verifications ${report.failedVerifications}`,
  );
  console.log(
    report.violations.length
      ? `VIOLATIONS:\n${report.violations.slice(0, 20).join('\n')}`
      : 'invariants hold: no overlapping holders, dependencies first, independent passes on final heads, no gap',
  );
  process.exitCode = report.violations.length ? 1 : 0;
} finally {
  await node.stop();
}
