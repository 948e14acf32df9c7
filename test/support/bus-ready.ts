// Waits for a Redis bus to hear the other nodes: connected, and hearing a board's channel it asks
// for (a node asks for each board it holds or its sockets watch).
import { Redis } from 'ioredis';
import type { RedisBus } from '../../src/bus/redis.js';
import { unique } from './temp.js';
import { until } from './until.js';

/** Resolves once `bus` is connected and hears what another connection publishes on a board's channel. */
export async function busHearsOthers(bus: RedisBus, redisUrl: string): Promise<void> {
  await until(() => bus.healthy, { what: 'the bus connecting to Redis' });
  const probe = unique('probe');
  let heard = false;
  const off = bus.subscribe((id) => void (id === probe && (heard = true)));
  await bus.hear(probe);
  const publisher = new Redis(redisUrl);
  try {
    // As another node publishes (a message no handler but this one is interested in).
    const message = JSON.stringify({ node: 'probe', boardId: probe, events: [] });
    await until(async () => heard || (await publisher.publish(`board:${probe}`, message), false), {
      what: 'the bus hearing a board channel',
    });
  } finally {
    off();
    publisher.disconnect();
  }
}
