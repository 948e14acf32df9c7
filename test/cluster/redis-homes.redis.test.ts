// A node counts itself a board's home only while its lease surely holds: it stops before the
// lease could lapse in Redis (so before another node can take it), a retaken lease is a new
// tenure, and without Redis it learns no home at all. Real Redis; the nodes' clocks are the test's.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
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
  const node = async (name: string, clock: () => number) => {
    const homes = new RedisHomes(url!, { clock });
    homes.start({ node: name, url: `http://${name}` }, () => true);
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
});
