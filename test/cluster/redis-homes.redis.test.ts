// A node counts itself a board's home only while its lease surely holds: it stops before the
// lease could lapse in Redis (so before another node can take it), a retaken lease is a new
// tenure, and without Redis it learns no home at all. A take or renewal answered after a give-up
// sent behind it is not held, and a node that gave its homes up (it drains) takes none again.
// Real Redis; the nodes' clocks are the test's.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { HomesGivenUp } from '../../src/cluster/homes.js';
import { HOME_LEASE_MS, HOME_MARGIN_MS, RedisHomes } from '../../src/cluster/redis-homes.js';
import { unique } from '../support/temp.js';
import { until } from '../support/until.js';

const url = inject('redisUrl');

describe.skipIf(!url)('board homes in Redis', () => {
  const opened: RedisHomes[] = [];
  afterEach(async () => {
    for (const homes of opened.splice(0)) await homes.close();
  });
  /** A node's homes, once its connection to Redis is up (commands are not queued before). */
  const node = async (name: string, clock: () => number, active: (boardId: string) => boolean = () => true) => {
    const homes = new RedisHomes(url!, { clock });
    homes.start({ node: name, url: `http://${name}` }, active);
    opened.push(homes);
    await until(() =>
      homes.homeOf(unique('warm-up')).then(
        () => true,
        () => false,
      ),
    );
    return homes;
  };

  it('is sure of its home until the margin before its lease could lapse, and a retaken lease starts a new tenure', async () => {
    let now = Date.now();
    const a = await node(unique('a'), () => now);
    const board = unique('board');
    expect(await a.homeOf(board)).toEqual({ self: true });
    const first = a.tenure(board);
    expect(first).not.toBeNull();
    now += HOME_LEASE_MS - HOME_MARGIN_MS - 1;
    expect(a.tenure(board)).toBe(first);
    now += 1;
    expect(a.tenure(board)).toBeNull(); // the lease could lapse in Redis within the margin: no longer sure
    expect(await a.homeOf(board)).toEqual({ self: true }); // asked again: Redis still says a (its key lives on Redis' own clock)
    expect(a.tenure(board)).not.toBe(first);
    expect(a.tenure(board)).not.toBeNull();
  });

  it('knows no home, its own included, once its lease is no longer sure and Redis cannot be reached', async () => {
    let now = Date.now();
    const a = await node(unique('a'), () => now);
    const board = unique('board');
    await a.homeOf(board);
    const lost = new RedisHomes('redis://127.0.0.1:1', { clock: () => now }); // a node whose Redis does not answer
    lost.start({ node: 'cut', url: 'http://cut' }, () => true);
    opened.push(lost);
    await expect(lost.homeOf(board)).rejects.toThrow();
    expect(lost.tenure(board)).toBeNull();
    now += HOME_LEASE_MS;
    expect(a.tenure(board)).toBeNull();
  });

  it('tells another node who the home is, and gives it the board once the home lets go', async () => {
    const a = await node(unique('a'), Date.now);
    const b = await node(unique('b'), Date.now);
    const board = unique('board');
    await a.homeOf(board);
    expect(await b.homeOf(board)).toMatchObject({ self: false });
    expect(b.tenure(board)).toBeNull();
    const keys = new Redis(url!);
    await keys.del(`home:${board}`);
    keys.disconnect();
    b.forget(board);
    expect(await b.homeOf(board)).toEqual({ self: true });
    expect(b.tenure(board)).not.toBeNull();
  });

  /** A renewal round now, as the node's timer runs it each third of a lease. */
  const renewAll = (homes: RedisHomes) => (homes as unknown as { renewAll(): Promise<void> }).renewAll();
  const keyOf = async (board: string) => {
    const keys = new Redis(url!);
    try {
      return await keys.get(`home:${board}`);
    } finally {
      keys.disconnect();
    }
  };

  it('does not hold a lease it took while its renewal round gave it up behind the take (the actor passivated)', async () => {
    let now = Date.now();
    let active = true;
    const name = unique('a');
    const a = await node(
      name,
      () => now,
      () => active,
    );
    const board = unique('board');
    await a.homeOf(board);
    now += HOME_LEASE_MS - HOME_MARGIN_MS; // no longer sure here (renewals were slow), and the actor passivated
    active = false;
    const taking = a.homeOf(board); // a command for the board: its take goes out first
    const renewing = renewAll(a); // then the round's give-up
    expect(await taking).toEqual({ self: true });
    await renewing;
    // Held only as Redis holds it: the take was asked again after the give-up.
    expect(a.tenure(board)).not.toBeNull();
    expect(await keyOf(board)).toBe(`${name} http://${name}`);
  });

  it('gives its homes up and takes none after: a take and a renewal under way are let go, and other nodes’ homes are still found', async () => {
    const a = await node(unique('a'), Date.now);
    const renewed = unique('board');
    const taken = unique('board');
    const free = unique('board');
    await a.homeOf(renewed);
    const renewing = renewAll(a);
    // Its refusal is expected at once: it may come before the give-up below resolves, and a
    // rejection no one had awaited yet is reported as unhandled.
    const taking = expect(a.homeOf(taken)).rejects.toBeInstanceOf(HomesGivenUp);
    await a.giveUpAll(); // the node begins to drain
    await renewing;
    await taking;
    expect(a.tenure(renewed)).toBeNull();
    expect(a.tenure(taken)).toBeNull();
    await until(async () => (await keyOf(renewed)) === null && (await keyOf(taken)) === null);
    await expect(a.homeOf(free)).rejects.toBeInstanceOf(HomesGivenUp);
    expect(await keyOf(free)).toBeNull();
    const b = await node(unique('b'), Date.now);
    expect(await b.homeOf(renewed)).toEqual({ self: true });
    expect(await a.homeOf(renewed)).toMatchObject({ self: false });
    // A request that was in flight as the drain began takes a free board (not another node's), and
    // a second give-up lets it go.
    expect(await a.homeOf(free, { takeWhileDraining: true })).toEqual({ self: true });
    expect(a.tenure(free)).not.toBeNull();
    expect(await a.homeOf(renewed, { takeWhileDraining: true })).toMatchObject({ self: false });
    await a.giveUpAll();
    expect(a.tenure(free)).toBeNull();
    expect(await keyOf(free)).toBeNull();
  });

  it('keeps a home while a command is being decided on it as the drain begins, and gives it up once none is', async () => {
    const a = await node(unique('a'), Date.now);
    const [busy, idle] = [unique('board'), unique('board')];
    await a.homeOf(busy);
    await a.homeOf(idle);
    let deciding = true;
    await a.giveUpAll((boardId) => boardId === busy && deciding);
    expect(a.tenure(idle)).toBeNull();
    expect(await keyOf(idle)).toBeNull();
    expect(a.tenure(busy)).not.toBeNull(); // its command is decided under its home, not beside a peer's
    expect(await keyOf(busy)).not.toBeNull();
    deciding = false;
    await renewAll(a); // the next round
    expect(a.tenure(busy)).toBeNull();
    expect(await keyOf(busy)).toBeNull();
  });

  it('lets go of a board a take in flight answers after close', async () => {
    const name = unique('a');
    const a = await node(name, Date.now);
    const [held, taken] = [unique('board'), unique('board')];
    await a.giveUpAll();
    expect(await a.homeOf(held, { takeWhileDraining: true })).toEqual({ self: true }); // close gives it up: a round trip
    const taking = a.homeOf(taken, { takeWhileDraining: true }).catch((e: unknown) => e);
    await a.close();
    expect(await taking).toBeInstanceOf(HomesGivenUp); // answered while close gave the other up
    expect(a.tenure(taken)).toBeNull();
    await until(async () => (await keyOf(taken)) !== `${name} http://${name}`);
  });
});
