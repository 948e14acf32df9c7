// The usage counters as a request leaves them (src/admin/usage.ts), on a real embedded store: each
// response adds to its day's rows per subject, a refusal also to the ten-minute buckets, a flush
// writes the sums, a row whose write failed waits for the next flush with whatever came meanwhile,
// and past the cap on waiting rows increments are dropped and counted, never kept without bound.
import { describe, expect, it } from 'vitest';
import { bucketOf, dayOf, UsageRecorder, usageId } from '../../src/admin/usage.js';
import type { RequestContext } from '../../src/request-context.js';
import { failOnce } from '../support/fail-once.js';
import { useStore } from '../support/stores.js';

const NOW = Date.UTC(2026, 10, 26, 16, 3);
const identity = { kind: 'token', principal: 'agent:builder', accountId: 'acct-1', boardId: 'board-1' };
const request = (over: Partial<RequestContext> = {}): RequestContext =>
  ({
    now: NOW,
    identity,
    project: { id: 'board-1' },
    remoteAddress: '203.0.113.7',
    operation: 'GET /api/status',
    ...over,
  }) as unknown as RequestContext;

describe('usage counters', () => {
  const held = useStore();
  const counts = async (day: string, scope: Parameters<typeof usageId>[1], key: string) =>
    (await held.store.usage.get(usageId(day, scope, key)))?.counts ?? null;

  it('adds each response to its day’s row per subject, a refusal to the ten-minute buckets too, and a flush writes the sums', async () => {
    const usage = new UsageRecorder(held.store, () => NOW);
    for (let i = 0; i < 5; i++) usage.record(request(), 200);
    usage.record(request(), 429);
    expect(usage.pendingRows).toBe(7); // platform, address, principal, account, board; two buckets
    await usage.flush();
    expect(usage.pendingRows).toBe(0);
    const day = dayOf(NOW);
    for (const [scope, key] of [
      ['address', '203.0.113.7'],
      ['principal', 'agent:builder'],
      ['account', 'acct-1'],
      ['board', 'board-1'],
    ] as const) {
      expect(await counts(day, scope, key), scope).toEqual({ requests: 6, r429: 1 });
    }
    expect(await counts(day, 'platform', 'all')).toMatchObject({
      requests: 6,
      r429: 1,
      activeAccounts: 1,
      activeBoards: 1,
      activeAgents: 1,
    });
    expect(await counts(bucketOf(NOW), 'address', '203.0.113.7')).toEqual({ r429: 1 });
    expect(await counts(bucketOf(NOW), 'principal', 'agent:builder')).toEqual({ r429: 1 });

    // Another flush adds to the stored rows.
    usage.record(request(), 200);
    await usage.flush();
    expect(await counts(day, 'board', 'board-1')).toEqual({ requests: 7, r429: 1 });
  });

  it('keeps a row whose write failed for the next flush, with what came meanwhile: nothing lost, nothing counted twice', async () => {
    const usage = new UsageRecorder(held.store, () => NOW);
    const other = { ...identity, principal: 'agent:verifier', accountId: 'acct-2', boardId: 'board-2' };
    const ctx = request({
      identity: other as never,
      project: { id: 'board-2' } as never,
      remoteAddress: '198.51.100.9',
    });
    usage.record(ctx, 200);
    usage.record(ctx, 200);
    failOnce(held.store.usage, 'add'); // the first row's write fails
    await usage.flush();
    expect(usage.lastFlush?.error).not.toBeNull();
    expect(usage.pendingRows).toBe(1);
    usage.record(ctx, 200);
    expect(usage.pendingRows).toBe(5); // the kept row took this request's count; the others are new again
    await usage.flush();
    expect(usage.lastFlush?.error).toBeNull();
    const day = dayOf(NOW);
    for (const [scope, key] of [
      ['address', '198.51.100.9'],
      ['principal', 'agent:verifier'],
      ['account', 'acct-2'],
      ['board', 'board-2'],
    ] as const) {
      expect(await counts(day, scope, key), scope).toEqual({ requests: 3 });
    }
  });

  it('counts a credential’s requests on the rows of their own day, address and board, across a flush and a change of each', async () => {
    let now = NOW;
    const usage = new UsageRecorder(held.store, () => now);
    const agent = { ...identity, principal: 'agent:poller', accountId: 'acct-3', boardId: 'board-3' };
    const ctx = (over: Partial<RequestContext> = {}) =>
      request({
        identity: agent as never,
        project: { id: 'board-3' } as never,
        remoteAddress: '192.0.2.30',
        now,
        ...over,
      });
    for (let i = 0; i < 3; i++) usage.record(ctx(), 200);
    await usage.flush();
    usage.record(ctx(), 200); // after the flush: the rows are new ones
    usage.record(ctx({ remoteAddress: '192.0.2.31' }), 200);
    usage.record(ctx({ project: { id: 'board-4' } as never }), 200);
    usage.record(ctx(), 200);
    const today = dayOf(NOW);
    now = NOW + 86_400_000;
    usage.record(ctx({ now }), 200);
    await usage.flush();
    expect(await counts(today, 'principal', 'agent:poller')).toEqual({ requests: 7 });
    expect(await counts(today, 'address', '192.0.2.30')).toEqual({ requests: 6 });
    expect(await counts(today, 'address', '192.0.2.31')).toEqual({ requests: 1 });
    expect(await counts(today, 'board', 'board-3')).toEqual({ requests: 6 });
    expect(await counts(today, 'board', 'board-4')).toEqual({ requests: 1 });
    const tomorrow = dayOf(now);
    for (const [scope, key] of [
      ['address', '192.0.2.30'],
      ['principal', 'agent:poller'],
      ['account', 'acct-3'],
      ['board', 'board-3'],
    ] as const) {
      expect(await counts(tomorrow, scope, key), scope).toEqual({ requests: 1 });
    }
  });

  it('drops and counts increments past 50,000 waiting rows', async () => {
    const usage = new UsageRecorder(held.store, () => NOW);
    // Each request from a new address adds one row (no identity: platform and address rows only).
    for (let i = 0; usage.pendingRows < 50_000; i++)
      usage.record(
        request({ identity: null, project: null, remoteAddress: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}` }),
        200,
      );
    expect(usage.dropped).toBe(0);
    usage.record(request({ identity: null, project: null, remoteAddress: '192.0.2.1' }), 200);
    usage.record(request({ identity: null, project: null, remoteAddress: '192.0.2.2' }), 200);
    expect(usage.pendingRows).toBe(50_000);
    expect(usage.dropped).toBe(2);
  });
});
