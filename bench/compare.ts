// npm run bench, first part: the peers (bench/peers.ts) and the board under load (bench/board.ts)
// in one run, then every target of the performance issue with its ratio to its peer.
import { main as boards } from './board.js';
import { main as peers } from './peers.js';

const quick = process.argv.includes('--quick');
const p = await peers(quick ? ['--quick'] : []);
console.log('\nThe board under load (bench/board.ts)');
const b = await boards(quick);

const first = b.latency[0]!;
const last = b.latency.at(-1)!;
const rows: [string, string, string, boolean][] = [
  ['claim→submit cycles/s (32 agents)', `${b.cycles.cyclesPerSecond.toFixed(0)}`, '≥ 2,000', b.cycles.cyclesPerSecond >= 2000],
  ['  ÷ BullMQ jobs/s (appendfsync always)', (b.cycles.cyclesPerSecond / p.queue.jobsPerSecond).toFixed(3), '≥ 0.25', b.cycles.cyclesPerSecond / p.queue.jobsPerSecond >= 0.25],
  [`claim p50 at ${last.items} ÷ at ${first.items} items`, (last.p50 / first.p50).toFixed(2), '≤ 2', last.p50 / first.p50 <= 2],
  ['GET /healthz ÷ bare uWS', (p.smallJson.healthz.requestsPerSecond / p.smallJson.uws.requestsPerSecond).toFixed(3), '≥ 0.8', p.smallJson.healthz.requestsPerSecond / p.smallJson.uws.requestsPerSecond >= 0.8],
  ['GET /api/status ÷ Fastify small JSON', (p.smallJson.status.requestsPerSecond / p.smallJson.fastify.requestsPerSecond).toFixed(3), '≥ 1', p.smallJson.status.requestsPerSecond >= p.smallJson.fastify.requestsPerSecond],
  ['fan-out deliveries/s ÷ uWS publish', (p.fanOut.ours.deliveriesPerSecond / p.fanOut.uws.deliveriesPerSecond).toFixed(3), '≥ 0.9', p.fanOut.ours.deliveriesPerSecond / p.fanOut.uws.deliveriesPerSecond >= 0.9],
  ['memory per idle socket ÷ bare uWS', (p.memory.ours.bytesPerSocket / p.memory.uws.bytesPerSocket).toFixed(2), '≤ 2', p.memory.ours.bytesPerSocket / p.memory.uws.bytesPerSocket <= 2],
  ['  the same, node --max-semi-space-size=1', (p.memory.oursRetained.bytesPerSocket / p.memory.uws.bytesPerSocket).toFixed(2), '≤ 2', p.memory.oursRetained.bytesPerSocket / p.memory.uws.bytesPerSocket <= 2],
  ['whoami with 10,000 tokens ÷ with 1', (b.whoami.many / b.whoami.one).toFixed(2), '≈ 1 (flat)', b.whoami.many / b.whoami.one >= 0.8],
  [`lease.expired p99 lateness (${b.storm.leases} leases)`, `${b.storm.p99} ms`, '≤ 1,000 ms', b.storm.p99 <= 1000],
  ['/healthz max during the expiry storm', `${b.storm.probeMax.toFixed(1)} ms`, '≤ 50 ms', b.storm.probeMax <= 50],
];
console.log('\nTargets');
for (const [name, value, goal, met] of rows) console.log(`  ${name.padEnd(44)} ${value.padStart(10)}   goal ${goal.padEnd(11)} ${met ? 'met' : 'NOT met'}`);
process.exit(0);
