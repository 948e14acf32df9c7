// µs per item step on the hot path (claim, renew, submit, verify), in this process, no server:
//   npx tsx bench/steps.ts [--rounds=N] [--steps=N]
// Times `step` (what the board calls) and, where machines/item-step.ts exports it, `machineStep`
// (XState's transition alone, the table's reference) on the same inputs, alternating round by
// round so drift in a loaded machine falls on both alike. Each row: median (min .. max) of the
// rounds' CPU µs per step. A step is pure, so the same input is stepped again and again.
import { loadavg } from 'node:os';
import * as itemStep from '../machines/item-step.js';
import type { ItemEvent, ItemLife, ItemState } from '../machines/item-types.js';

type Step = (state: ItemState, life: ItemLife, event: ItemEvent) => unknown;

const T0 = 1_000_000;
const HEAD = 'abcdef1';
const lease = (holder: string, purpose: 'work' | 'verify') => ({
  leaseId: `L-${holder}`,
  holder,
  purpose,
  fencingToken: 7,
  grantedAt: T0,
  expiresAt: T0 + 900_000,
  hardExpiresAt: T0 + 24 * 3600_000,
  ttlMs: 900_000,
});
const life = (verify: ItemLife['verify'], over: Partial<ItemLife> = {}): ItemLife => ({
  ...itemStep.initialLife(verify, 3),
  ...over,
});
const submitted = { submission: { head: HEAD, by: 'agent:w', at: T0 }, workHolders: ['agent:w'] };

const CASES: { name: string; state: ItemState; life: ItemLife; event: ItemEvent }[] = [
  {
    name: 'claim (ready -> claimed)',
    state: 'ready',
    life: life('none'),
    event: {
      type: 'CLAIM',
      principal: 'agent:w',
      purpose: 'work',
      leaseId: 'L-agent:w',
      fencingToken: 8,
      ttlMs: 900_000,
      now: T0,
    },
  },
  {
    name: 'renew (claimed)',
    state: 'claimed',
    life: life('none', { lease: lease('agent:w', 'work'), workHolders: ['agent:w'] }),
    event: { type: 'RENEW', leaseId: 'L-agent:w', ttlMs: 900_000, now: T0 + 1000 },
  },
  {
    name: 'submit (claimed -> done)',
    state: 'claimed',
    life: life('none', { lease: lease('agent:w', 'work'), workHolders: ['agent:w'] }),
    event: { type: 'SUBMIT', leaseId: 'L-agent:w', head: HEAD, now: T0 + 1000 },
  },
  {
    name: 'submit (claimed -> awaiting_verify)',
    state: 'claimed',
    life: life('required', { lease: lease('agent:w', 'work'), workHolders: ['agent:w'] }),
    event: { type: 'SUBMIT', leaseId: 'L-agent:w', head: HEAD, now: T0 + 1000 },
  },
  {
    name: 'verify pass (awaiting_verify -> done)',
    state: 'awaiting_verify',
    life: life('required', submitted),
    event: {
      type: 'VERIFY',
      principal: 'agent:v',
      head: HEAD,
      verdict: 'pass',
      finding: null,
      depsDone: true,
      now: T0 + 2000,
    },
  },
  {
    name: 'submit refused (stale lease)',
    state: 'claimed',
    life: life('none', { lease: lease('agent:w', 'work'), workHolders: ['agent:w'] }),
    event: { type: 'SUBMIT', leaseId: 'L-stale', head: HEAD, now: T0 + 1000 },
  },
];

const flag = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const ROUNDS = flag('rounds', 7);
const STEPS = flag('steps', 50_000);

let sink: unknown;
/** CPU µs per step (user + system), not wall time: a loaded machine's waits for a core do not count. */
function time(fn: Step, c: (typeof CASES)[number]): number {
  const before = process.cpuUsage();
  for (let i = 0; i < STEPS; i++) sink = fn(c.state, c.life, c.event);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / STEPS;
}

const reference = (itemStep as { machineStep?: Step }).machineStep;
const sides: [string, Step][] = [
  ['step', itemStep.step],
  ...(reference ? [['machineStep', reference] as [string, Step]] : []),
];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const show = (xs: number[]) =>
  `${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(3)} .. ${Math.max(...xs).toFixed(3)})`;

console.log(
  `bench/steps.ts: node ${process.version}, ${ROUNDS} rounds of ${STEPS.toLocaleString('en-US')} steps, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at start; CPU µs per step, median (min .. max)`,
);
for (const c of CASES) for (const [, fn] of sides) time(fn, c); // warm up every path before any round
for (const c of CASES) {
  const samples = sides.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...sides.keys()].reverse() : [...sides.keys()];
    for (const i of order) samples[i]!.push(time(sides[i]![1], c));
  }
  const cells = sides.map(([name], i) => `${name} ${show(samples[i]!)}`);
  const ratio =
    samples.length > 1 ? `  machineStep/step ${(median(samples[1]!) / median(samples[0]!)).toFixed(1)}x` : '';
  console.log(`${c.name.padEnd(38)} ${cells.join('  ')}${ratio}`);
}
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at end${sink ? '' : ' '}`,
);
