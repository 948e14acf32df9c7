// An allowlist change made on one node reaches the others over the bus at once: each node keeps
// the list in memory and reads it again when told (src/admin/allowlist.ts); its 10 s re-read is
// only the fallback for a bus that is down, and is not running here, so only the notice can do it.
import pino from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { Allowlist } from '../../src/admin/allowlist.js';
import type { OperatorCtx } from '../../src/admin/audit.js';
import { RedisBus } from '../../src/bus/redis.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';

const url = inject('redisUrl');

describe.skipIf(!url)('the allowlist across nodes', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('is followed by another node as soon as the bus tells it of a change, added or removed', async () => {
    const dir = await tempDir();
    const store = await openEmbeddedStore(dir.path);
    closers.push(
      () => dir.remove(),
      () => store.close(),
    );
    const node = async () => {
      const bus = new RedisBus(url!);
      closers.push(() => bus.close());
      await expect.poll(() => bus.health, { timeout: 5000 }).toBe('ok');
      const list = new Allowlist(store, pino({ level: 'silent' }), () => bus.notify({ kind: 'allowlist.changed' }));
      let told = 0;
      bus.onNotice((n) => void (n.kind === 'allowlist.changed' && (told++, list.refresh())));
      await list.refresh();
      return { list, bus, told: () => told };
    };
    const [nodeA, nodeB] = [await node(), await node()];
    // Each hears the other's notices: both subscriptions to them have landed.
    for (const [from, to] of [
      [nodeA, nodeB],
      [nodeB, nodeA],
    ] as const)
      await until(() => to.told() > 0 || (from.bus.notify({ kind: 'allowlist.changed' }), false), {
        what: 'a notice crossing Redis',
      });
    const [a, b] = [nodeA.list, nodeB.list];
    const ctx: OperatorCtx = {
      identity: { kind: 'session', principal: 'user:operator', accountId: 'operator', sessionId: 's1' },
      requestId: 'r1',
      remoteAddress: '127.0.0.1',
      now: Date.now(),
    };
    expect(b.exempt('198.51.100.7')).toBeNull();
    await a.add(ctx, '198.51.100.0/24', 'office network');
    await expect.poll(() => b.exempt('198.51.100.7'), { timeout: 5000 }).toBe('address');
    expect(b.exempt('192.0.2.1', 'dev@corp.example')).toBeNull();
    await b.add(ctx, 'corp.example', 'the company behind one address');
    await expect.poll(() => a.exempt('192.0.2.1', 'dev@corp.example'), { timeout: 5000 }).toBe('domain');
    await a.remove(ctx, '198.51.100.0/24', 'closed');
    await expect.poll(() => b.exempt('198.51.100.7'), { timeout: 5000 }).toBeNull();
  });
});
