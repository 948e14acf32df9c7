// The outbox across nodes sharing one store: mail whose holder died (its attempt never ends, its
// timers never fire: what kill -9 leaves) is taken over after the takeover delay by exactly one of
// the nodes still running, and sent once; a record that cannot be opened is left alone.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { deriveKeys } from '../../src/auth/keys.js';
import type { MailMessage } from '../../src/mail/mailer.js';
import { OutboxMailer } from '../../src/mail/outbox.js';
import type { OpenedStore } from '../support/stores.js';
import { TEST_SECRET } from '../support/server.js';
import { until } from '../support/until.js';

const key = deriveKeys(TEST_SECRET).mail;
const TAKEOVER_MS = 400;

export function outboxTakeover(name: string, open: () => Promise<OpenedStore>): void {
  describe(`mail outbox takeover (${name})`, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    async function shared(): Promise<OpenedStore> {
      const opened = await open();
      cleanups.push(async () => (await opened.store.close(), await opened.drop()));
      return opened;
    }

    /** A running node's outbox: it records what it delivers, and counts its sweeps (each looks for lapsed mail). */
    function node(store: OpenedStore['store'], delivered: string[], nodeKey = key, takeoverMs = TAKEOVER_MS) {
      const lines: Record<string, unknown>[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
      let sweeps = 0;
      const outbox: typeof store.mailOutbox = Object.create(store.mailOutbox);
      outbox.find = (...args) => (sweeps++, store.mailOutbox.find(...args));
      const mailer = new OutboxMailer(async (m) => void delivered.push(m.to), outbox, nodeKey, logger, {
        takeoverMs,
        sweepMs: 50,
      });
      mailer.start();
      cleanups.push(() => mailer.close(100));
      return { mailer, lines, sweeps: () => sweeps };
    }

    it('mail held by a node that died is sent once, by one of the three still running, after the takeover delay', async () => {
      const { store } = await shared();
      // The dying node accepts three messages; its attempts never end.
      const dying = new OutboxMailer(
        () => new Promise<void>(() => undefined),
        store.mailOutbox,
        key,
        pino({ level: 'silent' }),
        { takeoverMs: TAKEOVER_MS, sweepMs: 60_000 },
      );
      const messages: MailMessage[] = [1, 2, 3].map((n) => ({
        to: `person${n}@example.com`,
        subject: `hello ${n}`,
        text: `link #token=secret${n}`,
      }));
      const acceptedAt = Date.now();
      for (const m of messages) await dying.send(m);
      expect(await store.mailOutbox.count({})).toBe(3);

      const delivered: string[] = [];
      const others = [node(store, delivered), node(store, delivered), node(store, delivered)];
      await expect.poll(() => delivered.length, { timeout: 15_000 }).toBe(3);
      expect(Date.now() - acceptedAt).toBeGreaterThanOrEqual(TAKEOVER_MS);
      expect(delivered.sort()).toEqual(messages.map((m) => m.to));
      await expect.poll(() => store.mailOutbox.count({}), { timeout: 5_000 }).toBe(0);
      // A few more sweeps by each node: nothing is sent twice.
      const swept = others.map((o) => o.sweeps());
      await until(() => others.every((o, i) => o.sweeps() >= swept[i]! + 3), {
        what: 'three more sweeps by each node',
      });
      expect(delivered).toHaveLength(3);
      const takeovers = others.flatMap((o) =>
        o.lines.filter((l) => l.msg === 'mail taken over from the outbox: its holder stopped'),
      );
      expect(takeovers).toHaveLength(3);
    }, 30_000);

    it('a node that holds mail keeps it while it lives: the others do not take it over before its hold lapses', async () => {
      const { store } = await shared();
      // A hold renewed every 150 ms, by writes that may each take a few hundred ms on a busy wire
      // server: a takeover delay with room for that, and attempts until well past it.
      const takeoverMs = 1_500;
      const attempts: number[] = [];
      let refuse = true;
      const holder = new OutboxMailer(
        async () => {
          attempts.push(Date.now());
          if (refuse) throw Object.assign(new Error('try later'), { responseCode: 451 });
        },
        store.mailOutbox,
        key,
        pino({ level: 'silent' }),
        { takeoverMs, sweepMs: 50, baseDelayMs: 150, maxDelayMs: 150, maxAttempts: 100 },
      );
      holder.start();
      cleanups.push(() => holder.close(100));
      await holder.send({ to: 'kept@example.com', subject: 'kept', text: 'x' });
      const delivered: string[] = [];
      node(store, delivered, key, takeoverMs);
      // Held past two takeover delays, by renewing its hold, and nobody else sent it.
      await expect
        .poll(() => attempts.length >= 8 && attempts.at(-1)! - attempts[0]! > 2 * takeoverMs, { timeout: 20_000 })
        .toBe(true);
      expect(delivered).toEqual([]);
      refuse = false;
      await expect.poll(() => store.mailOutbox.count({}), { timeout: 5_000 }).toBe(0);
      expect(delivered).toEqual([]);
    }, 30_000);

    it('a node that stops while it renews its hold for a retry hands the mail back rather than keeping it held or sending it', async () => {
      const { store } = await shared();
      // The store writes each change at once, but its answer to the renewal (a change of heldUntil
      // alone) is held back until the node is told to stop: it stops while that answer is on its way.
      let renewing: (() => void) | null = null;
      const renewalWritten = new Promise<void>((resolve) => (renewing = resolve));
      let stopping!: () => void;
      const stopCalled = new Promise<void>((resolve) => (stopping = resolve));
      const outbox: typeof store.mailOutbox = Object.create(store.mailOutbox);
      outbox.update = async (id, version, changes) => {
        const updated = await store.mailOutbox.update(id, version, changes);
        if (!('attempts' in changes)) {
          renewing?.();
          await stopCalled;
        }
        return updated;
      };
      const attempts: number[] = [];
      const holder = new OutboxMailer(
        async () => {
          attempts.push(Date.now());
          throw Object.assign(new Error('try later'), { responseCode: 451 });
        },
        outbox,
        key,
        pino({ level: 'silent' }),
        { takeoverMs: 60_000, sweepMs: 60_000, baseDelayMs: 50, maxDelayMs: 50 },
      );
      await holder.send({ to: 'handed@example.com', subject: 'handed back', text: 'x' });
      await renewalWritten;
      const closed = holder.close(2_000);
      stopping();
      await closed;
      const [record] = await store.mailOutbox.find({});
      expect(record!.heldUntil).toBeLessThanOrEqual(Date.now()); // another node, or the next start, sends it at once
      expect(attempts).toHaveLength(1); // the stopping node did not try again
    }, 30_000);

    it('a record sealed under another secret is left in the outbox, logged, not sent', async () => {
      const { store } = await shared();
      const stranger = new OutboxMailer(
        () => new Promise<void>(() => undefined),
        store.mailOutbox,
        deriveKeys(`${TEST_SECRET}-another`).mail,
        pino({ level: 'silent' }),
        { takeoverMs: 1, sweepMs: 60_000 },
      );
      await stranger.send({ to: 'someone@example.com', subject: 'sealed elsewhere', text: 'x' });
      const delivered: string[] = [];
      const other = node(store, delivered);
      await expect
        .poll(
          () =>
            other.lines.filter(
              (l) =>
                l.msg ===
                'mail in the outbox cannot be opened (altered, or sealed under another SECRET_KEY); left there',
            ).length,
          { timeout: 10_000 },
        )
        .toBeGreaterThanOrEqual(1);
      expect(delivered).toEqual([]);
      expect(await store.mailOutbox.count({})).toBe(1);
    }, 30_000);
  });
}
