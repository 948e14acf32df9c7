// A paid upgrade is never lost (issue 27), run on each store: the server runs as a child process
// (`src/main.ts`, as `npm start` does) and is killed with SIGKILL after each step of the webhook
// path (BOARD_TEST_CRASH_AT, src/billing/crash-point.ts) while applying a subscription.created
// that makes a board Pro. After a restart, either the provider's redelivery or, with no
// redelivery at all, the reconcile pass at start leaves the board's plan and billing status equal
// to what stripe-mock holds of the subscription. The state at each crash is checked too, so each
// case is known to have died where it says.
import { describe, expect, inject, it } from 'vitest';
import { billingPlan } from '../../src/billing/plan.js';
import type { CrashStep } from '../../src/billing/crash-point.js';
import type { Store } from '../../store/ports/store.js';
import { billingRecord, deliverSigned } from '../support/billing.js';
import { startMain, type NodeProcess } from '../support/process.js';
import { unique } from '../support/temp.js';

const stripeBase = inject('stripeBase');
const SECRET = 'whsec_crash_test';
const PRICE = 'price_crash_monthly';
const STEPS: CrashStep[] = [
  'webhook:after-pending',
  'webhook:after-apply',
  'webhook:after-settle',
  'webhook:after-log',
];

/** A store a child process can be pointed at, and opened here between its runs. */
export interface CrashStore {
  env: Record<string, string>;
  /** Opened in this process only while no child runs (the embedded store is one process's at a time). */
  open(): Promise<Store>;
  drop(): Promise<void>;
  /** Once the node is known killed: what an operator may do to restart at once (MongoDB: end its sole-writer lease). */
  afterKill?(): Promise<void>;
}

const billingEnv = (reconcile: boolean): Record<string, string> => ({
  STRIPE_SECRET_KEY: 'sk_test_123',
  STRIPE_WEBHOOK_SECRET: SECRET,
  STRIPE_PRICE_MONTHLY: PRICE,
  STRIPE_PRICE_YEARLY: 'price_crash_yearly',
  STRIPE_API_BASE: stripeBase ?? '',
  BILLING_RECONCILE_INTERVAL_SECONDS: reconcile ? '3600' : '0',
});

/** stripe-mock's subscription (it answers one fixture for any id or customer) as the provider's truth. */
async function providerSubscription(id: string): Promise<{ id: string; customer: string; status: string }> {
  const res = await fetch(`${stripeBase}/v1/subscriptions/${id}`, { headers: { authorization: 'Bearer sk_test_123' } });
  return (await res.json()) as { id: string; customer: string; status: string };
}

async function withStore<T>(s: CrashStore, read: (store: Store) => Promise<T>): Promise<T> {
  const store = await s.open();
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

async function stop(node: NodeProcess): Promise<void> {
  if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill('SIGTERM');
  await node.exited;
}

/** What the store holds of the board after the crash, before any restart. */
async function atCrash(store: Store, projectId: string, eventId: string) {
  const rows = await store.audit.find({ projectId, action: 'billing.webhook' });
  return {
    status: (await store.billing.get(projectId))!.status,
    marked: (await store.billing.get(projectId))!.appliedEventIds?.includes(eventId) ?? false,
    plan: (await store.projects.get(projectId))!.plan,
    logged: (await store.billingEvents.versionOf(eventId)) !== null,
    outcomes: rows.map((r) => r.data.outcome),
  };
}

/** The state each step leaves when the process dies right after it. */
const EXPECTED_AT_CRASH: Record<CrashStep, Awaited<ReturnType<typeof atCrash>>> = {
  'webhook:after-pending': { status: null, marked: false, plan: 'free', logged: false, outcomes: ['pending'] },
  // The effect and its mark landed together; the plan is not settled yet (before issue 27 this
  // state answered every redelivery "duplicate" and the board stayed Free).
  'webhook:after-apply': { status: 'active', marked: true, plan: 'free', logged: false, outcomes: ['pending'] },
  'webhook:after-settle': { status: 'active', marked: true, plan: 'pro', logged: false, outcomes: ['pending'] },
  'webhook:after-log': { status: 'active', marked: true, plan: 'pro', logged: true, outcomes: ['pending'] },
};

export function crashFlow(name: string, fresh: () => Promise<CrashStore>): void {
  describe.skipIf(!stripeBase)(`a webhook killed at each step on the ${name} store`, () => {
    /** A board billed to stripe-mock's fixture customer, Free, and the event that makes it Pro. */
    async function seeded(s: CrashStore) {
      const list = await fetch(`${stripeBase}/v1/subscriptions?limit=1`, {
        headers: { authorization: 'Bearer sk_test_123' },
      });
      const fixture = ((await list.json()) as { data: { id: string; customer: string }[] }).data[0]!;
      const projectId = unique('proj');
      await withStore(s, async (store) => {
        const now = Date.now();
        await store.projects.insert({
          _id: projectId,
          version: 1,
          name: projectId,
          ownerId: 'acc_crash',
          plan: 'free',
          createdAt: now,
          lastActivityAt: now,
        });
        await store.billing.insert(billingRecord(projectId, 'acc_crash', { customerId: fixture.customer }));
      });
      const subscription = {
        id: fixture.id,
        object: 'subscription',
        customer: fixture.customer,
        status: 'active',
        cancel_at_period_end: false,
        metadata: { projectId },
        items: { data: [{ price: { id: PRICE }, current_period_end: Math.floor(Date.now() / 1000) + 30 * 86400 }] },
      };
      const event = {
        id: `evt_${unique('crash')}`,
        object: 'event',
        type: 'customer.subscription.created',
        created: Math.floor(Date.now() / 1000) - 5,
        livemode: false,
        data: { object: subscription },
      };
      return { projectId, event, body: JSON.stringify(event) };
    }

    /** Delivers the event to a node set to die at `step`, and checks it died there. */
    async function crashAt(
      s: CrashStore,
      step: CrashStep,
      projectId: string,
      eventId: string,
      body: string,
    ): Promise<void> {
      const node = await startMain({ ...s.env, ...billingEnv(false), BOARD_TEST_CRASH_AT: step });
      try {
        const answered = await deliverSigned(node.url, body, SECRET).then(
          (res) => res.status,
          () => 'no answer',
        );
        expect(answered, node.output()).toBe('no answer');
        await node.exited;
        expect(node.child.signalCode).toBe('SIGKILL');
      } finally {
        await stop(node);
      }
      await s.afterKill?.();
      expect(await withStore(s, (store) => atCrash(store, projectId, eventId))).toEqual(EXPECTED_AT_CRASH[step]);
    }

    /** The board's plan and billing status are what the provider holds of its subscription. */
    async function expectProviderTruth(store: Store, projectId: string): Promise<void> {
      const record = (await store.billing.get(projectId))!;
      const truth = await providerSubscription(record.subscriptionId!);
      expect(truth.status).toBe('active');
      expect(record).toMatchObject({ customerId: truth.customer, subscriptionId: truth.id, status: truth.status });
      expect((await store.projects.get(projectId))!.plan).toBe(
        billingPlan({ status: truth.status, pastDueSince: null }, Date.now()),
      );
    }

    const terminal = (store: Store, projectId: string, eventId: string) =>
      store.audit
        .find({ projectId, action: 'billing.webhook' }, { sort: [['at', 1]] })
        .then((rows) =>
          rows.filter((r) => r.data.eventId === eventId && r.data.outcome !== 'pending').map((r) => r.data.outcome),
        );

    for (const step of STEPS) {
      it(`${step}: the restarted node applies the provider's redelivery, and the board is Pro as the provider says`, async () => {
        const s = await fresh();
        try {
          const { projectId, event, body } = await seeded(s);
          await crashAt(s, step, projectId, event.id, body);
          // Restarted with no reconcile pass: only the redelivery can settle it.
          const node = await startMain({ ...s.env, ...billingEnv(false) });
          try {
            const res = await deliverSigned(node.url, body, SECRET);
            expect(res.status, res.text).toBe(200);
          } finally {
            await stop(node);
          }
          await withStore(s, async (store) => {
            await expectProviderTruth(store, projectId);
            // Applied once: by the redelivery when the first delivery died before its write, else by the first.
            expect(await terminal(store, projectId, event.id)).toEqual([
              step === 'webhook:after-pending' ? 'applied' : 'duplicate',
            ]);
            expect((await store.billing.get(projectId))!.appliedEventIds).toEqual([event.id]);
          });
        } finally {
          await s.drop();
        }
      }, 120_000);

      it(`${step}: with no redelivery, the reconcile pass at start settles the board from the provider`, async () => {
        const s = await fresh();
        try {
          const { projectId, event, body } = await seeded(s);
          await crashAt(s, step, projectId, event.id, body);
          const node = await startMain({ ...s.env, ...billingEnv(true) });
          try {
            await expect
              .poll(() => /"msg":"billing: reconcile pass"/.test(node.output()), { timeout: 30_000 })
              .toBe(true);
            const pass = JSON.parse(
              node
                .output()
                .split('\n')
                .find((l) => l.includes('"msg":"billing: reconcile pass"'))!,
            ) as Record<string, number>;
            expect(pass).toMatchObject({ candidates: 1, reread: 1, failed: 0, conflicts: 0, deferred: 0 });
            // A redelivery after it changes nothing.
            expect((await deliverSigned(node.url, body, SECRET)).status).toBe(200);
          } finally {
            await stop(node);
          }
          await withStore(s, async (store) => {
            await expectProviderTruth(store, projectId);
            expect((await store.billing.get(projectId))!.reconciledAt).toEqual(expect.any(Number));
            // Died before its write: the pass's answer is newer than the event, which is then ignored.
            expect(await terminal(store, projectId, event.id)).toEqual([
              step === 'webhook:after-pending' ? 'ignored' : 'duplicate',
            ]);
          });
        } finally {
          await s.drop();
        }
      }, 120_000);
    }
  });
}
