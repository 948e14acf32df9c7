import net from 'node:net';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import type { CommittedEvent } from '../../actors/board-actor.js';
import type { AnyNotice as Notice } from '../../src/bus/bus.js';
import { RedisBus } from '../../src/bus/redis.js';
import { busHearsOthers } from '../support/bus-ready.js';
import { canRunRedis, ownRedis } from '../support/redis-server.js';
import { until } from '../support/until.js';
import { unique } from '../support/temp.js';
import { batch, busContract } from './contract.js';

const url = inject('redisUrl');

const ready = async (bus: RedisBus): Promise<RedisBus> => (await busHearsOthers(bus, url!), bus);

/**
 * Resolves once `to` has heard a mark `from` publishes now: Redis hands each subscriber its
 * messages in the order it took them, so everything published before (a node's own copy coming
 * back included) has reached `to` too, and whatever it was to be handed has been.
 */
async function caughtUp(from: RedisBus, to: RedisBus): Promise<void> {
  const mark = unique('mark');
  let heard = false;
  const off = to.subscribe((id) => void (id === mark && (heard = true)));
  await to.hear(mark);
  from.publish(mark, batch(mark, 1));
  await until(() => heard, { what: 'a mark crossing Redis' });
  off();
}

describe.skipIf(!url)('redis bus', () => {
  busContract('redis', async () => ready(new RedisBus(url!)));

  it('carries each commit to the other nodes once, and not back to its own node', async () => {
    const [one, two] = await Promise.all([ready(new RedisBus(url!)), ready(new RedisBus(url!))]);
    const board = unique('board');
    const atOne: CommittedEvent[][] = [];
    const atTwo: CommittedEvent[][] = [];
    one.subscribe((id, events) => id === board && atOne.push(events));
    two.subscribe((id, events) => id === board && atTwo.push(events));
    await Promise.all([one.hear(board), two.hear(board)]);
    one.publish(board, batch(board, 1));
    two.publish(board, batch(board, 3));
    await until(() => atOne.length >= 2 && atTwo.length >= 2);
    // Both batches have crossed Redis: a mark either way now follows every copy, so any more would have arrived.
    await Promise.all([caughtUp(one, two), caughtUp(two, one)]);
    expect(atOne).toEqual([batch(board, 1), batch(board, 3)]);
    expect(atTwo.map((b) => b[0]!.seq).sort()).toEqual([1, 3]);
    expect(atTwo).toHaveLength(2);
    await one.close();
    await two.close();
  });

  it('hands another node’s commits only to a handler interested in their board, and its own always', async () => {
    const [one, two] = await Promise.all([ready(new RedisBus(url!)), ready(new RedisBus(url!))]);
    const [wanted, unwanted] = [unique('board'), unique('board')];
    const heard: string[] = [];
    const asked: string[] = [];
    two.subscribe(
      (id, events) => (id === wanted || id === unwanted) && heard.push(`${id}:${events[0]!.seq}`),
      (id) => {
        if (id === wanted || id === unwanted) asked.push(id);
        return id === wanted;
      },
    );
    await Promise.all([two.hear(wanted), two.hear(unwanted)]);
    one.publish(unwanted, batch(unwanted, 1));
    one.publish(wanted, batch(wanted, 5));
    two.publish(unwanted, batch(unwanted, 9)); // its own: delivered whatever the interest
    await until(() => heard.length >= 2 && asked.includes(unwanted), 2000);
    // Two's own copy of its batch has crossed Redis before two's mark reaches one, and reaches two before one's
    // mark sent after: any handing over more would have happened.
    await caughtUp(two, one);
    await caughtUp(one, two);
    expect(heard).toEqual([`${unwanted}:9`, `${wanted}:5`]);
    expect(asked).toContain(unwanted); // it was asked, and said no: the batch was never handed over
    await one.close();
    await two.close();
  });

  it('receives no commit of a board it did not ask for, and gives a board up once no handler wants it', async () => {
    const one = await ready(new RedisBus(url!));
    const two = await ready(new RedisBus(url!, undefined, 50));
    const [asked, unasked] = [unique('board'), unique('board')];
    let wanted = true;
    const heard: string[] = [];
    const received: string[] = []; // the boards two was asked about: those it received a batch of
    two.subscribe(
      (id, events) => (id === asked || id === unasked) && heard.push(`${id}:${events[0]!.seq}`),
      (id) => (received.push(id), id !== asked || wanted),
    );
    expect(two.hearing(asked)).toBeNull(); // not yet: asking for it now
    await two.hear(asked);
    const term = two.hearing(asked);
    expect(term).not.toBeNull();
    one.publish(unasked, batch(unasked, 1));
    one.publish(asked, batch(asked, 2));
    await caughtUp(one, two);
    expect(heard).toEqual([`${asked}:2`]);
    expect(received).toContain(asked);
    expect(received).not.toContain(unasked); // its batch never reached two
    wanted = false;
    await until(() => two.hearing(asked) !== term, { what: 'the unwanted board given up, then asked for anew' });
    wanted = true;
    await two.hear(asked);
    expect(two.hearing(asked)).toBeGreaterThan(term!); // a new term: a home reads the board again before it vouches
    await one.close();
    await two.close();
  });

  it('gives a board’s channel up while the pattern is on once no handler keeps it, and still hears the board by the pattern', async () => {
    const one = await ready(new RedisBus(url!));
    const two = await ready(new RedisBus(url!, undefined, 50));
    const redis = new Redis(url!);
    const board = unique('board');
    let kept = true;
    const heard: number[] = [];
    // As a node with a firehose open: interested in every board, keeping only the one it needs besides.
    two.subscribe(
      (id, events) => id === board && heard.push(events[0]!.seq),
      () => true,
      (id) => id === board && kept,
    );
    await two.hear(board);
    await two.hearAll(true);
    expect(await redis.pubsub('NUMSUB', `board:${board}`)).toEqual([`board:${board}`, 1]);
    kept = false;
    await until(() => two.hearing(board) === null, { what: 'the channel given up under the pattern' });
    await until(async () => ((await redis.pubsub('NUMSUB', `board:${board}`)) as [string, number])[1] === 0, {
      what: 'Redis told',
    });
    one.publish(board, batch(board, 3));
    await caughtUp(one, two);
    expect(heard).toEqual([3]); // by the pattern, once
    redis.disconnect();
    await one.close();
    await two.close();
  });
});

/**
 * A TCP proxy to Redis that can cut every connection, drop the next write that subscribes (as a
 * connection lost before Redis read it would), refuse connections for a while, or hold the next
 * write that subscribes, and what follows it, for a while (as a stalled Redis would).
 */
async function flakyProxy(redisUrl: string) {
  const target = new URL(redisUrl);
  const sockets = new Set<net.Socket>();
  let dropNextSubscribe = false;
  let holdNextSubscribe = 0;
  let refusing = false;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (refusing) return client.destroy();
    const up = net.connect(Number(target.port), target.hostname);
    sockets.add(up);
    up.on('error', () => up.destroy());
    up.on('close', () => (sockets.delete(up), client.destroy()));
    client.on('close', () => up.destroy());
    up.pipe(client);
    let heldUntil = 0;
    client.on('data', (data) => {
      if (holdNextSubscribe && /subscribe/i.test(data.toString())) {
        heldUntil = Date.now() + holdNextSubscribe;
        holdNextSubscribe = 0;
      }
      if (Date.now() < heldUntil) return void setTimeout(() => up.write(data), heldUntil - Date.now());
      if (dropNextSubscribe && /subscribe/i.test(data.toString())) {
        dropNextSubscribe = false;
        refusing = true; // lost before Redis read it, and Redis unreachable for a while after
        setTimeout(() => (refusing = false), 1500);
        for (const s of sockets) s.destroy();
        return;
      }
      up.write(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    /** Holds the next subscribe (and what follows it on its connection) `ms` before Redis reads it. */
    holdNextSubscribe(ms: number): void {
      holdNextSubscribe = ms;
    },
    /** Cuts every connection now, and the first re-subscribe after it. */
    cutTwice(): void {
      dropNextSubscribe = true;
      for (const s of sockets) s.destroy();
    },
    close: () => (server.close(), sockets.forEach((s) => s.destroy())),
  };
}

/**
 * A bus connected through a flaky proxy to a Redis of its own: on the shared one, other suites'
 * nodes publish notices (a catch-up when they reconnect) that the bus would hear.
 */
async function busThroughProxy() {
  const redis = await ownRedis();
  const proxy = await flakyProxy(redis.url);
  const bus = new RedisBus(proxy.url);
  await until(() => bus.healthy, { what: 'the bus connecting through the proxy' });
  return {
    redis,
    proxy,
    bus,
    async stop() {
      await bus.close();
      proxy.close();
      redis.kill();
    },
  };
}

describe.skipIf(!url || !canRunRedis)('redis bus across lost connections', () => {
  it('hears its boards again after a connection lost twice, the second time before Redis read the re-subscribe', async () => {
    const { redis, proxy, bus, stop } = await busThroughProxy();
    const publisher = new Redis(redis.url);
    const board = unique('board');
    const heard: number[] = [];
    bus.subscribe((id, events) => void (id === board && heard.push(events[0]!.seq)));
    const send = (seq: number) =>
      publisher.publish(
        `board:${board}`,
        JSON.stringify({ node: 'other', boardId: board, events: batch(board, seq, 1) }),
      );
    try {
      await bus.hear(board);
      const first = bus.hearing(board);
      expect(first).not.toBeNull();
      await send(1);
      await until(() => heard.includes(1), { what: 'the first batch' });
      proxy.cutTwice();
      await until(() => bus.hearing(board) === null, { what: 'the term ending with the connection' });
      // Back: the board's channel asked again on the connection that stayed, and a new term once Redis confirmed it.
      await until(() => bus.healthy && bus.hearing(board) !== null, { what: 'the board heard again', timeout: 20_000 });
      expect(bus.hearing(board)).toBeGreaterThan(first!);
      expect(await publisher.pubsub('NUMSUB', `board:${board}`)).toEqual([`board:${board}`, 1]);
      await send(2);
      await until(() => heard.includes(2), { what: 'a batch after the outages' });
    } finally {
      publisher.disconnect();
      await stop();
    }
  }, 60_000);
});

describe.skipIf(!url || !canRunRedis)('redis bus with a stalled Redis', () => {
  it('lets a subscribe go on after 2 s, and asks for a catch-up of that board when its channel is confirmed later', async () => {
    const { proxy, bus, stop } = await busThroughProxy();
    const catchUps: (string | undefined)[] = [];
    bus.onNotice((n: Notice) => void (n.kind === 'catch-up' && catchUps.push(n.boardId)));
    const board = unique('board');
    try {
      proxy.holdNextSubscribe(3000);
      const asked = Date.now();
      await bus.hear(board);
      expect(Date.now() - asked).toBeLessThan(2900); // went on before Redis confirmed
      expect(bus.hearing(board)).toBeNull();
      expect(catchUps).toEqual([]);
      await until(() => bus.hearing(board) !== null, { what: 'the late confirmation', timeout: 10_000 });
      await until(() => catchUps.length === 1, { what: 'a catch-up after it' });
      expect(catchUps).toEqual([board]); // of that board alone: no notice was lost
    } finally {
      await stop();
    }
  }, 30_000);
});

describe.skipIf(!url || !canRunRedis)('redis bus across outages', () => {
  it('asks this node to catch up each time Redis comes back, also when it was away from the start', async () => {
    const redis = await ownRedis();
    redis.kill();
    const healths: string[] = [];
    const bus = new RedisBus(redis.url, (health) => healths.push(health));
    const catchUps: Notice[] = [];
    bus.onNotice((n) => n.kind === 'catch-up' && catchUps.push(n));
    try {
      await until(() => healths.length > 0, { what: 'the bus failing to reach Redis' });
      expect(healths).toEqual(['degraded']);
      expect(bus.health).toBe('degraded');
      await redis.start();
      await until(() => catchUps.length === 1);
      await until(() => bus.health === 'ok');
      redis.kill();
      await until(() => bus.health === 'degraded');
      await redis.start();
      await until(() => catchUps.length === 2);
    } finally {
      await bus.close();
      redis.kill();
    }
  }, 60_000);
});
