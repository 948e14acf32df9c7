import { describe, expect, inject, it } from 'vitest';
import type { CommittedEvent } from '../../actors/board-actor.js';
import { RedisBus } from '../../src/bus/redis.js';
import { unique } from '../support/temp.js';
import { batch, busContract } from './contract.js';

const url = inject('redisUrl');

async function ready(bus: RedisBus): Promise<RedisBus> {
  for (let i = 0; i < 100 && !bus.healthy; i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 50)); // the pattern subscription lands
  return bus;
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
    one.publish(board, batch(board, 1));
    two.publish(board, batch(board, 3));
    for (let i = 0; i < 100 && (atOne.length < 2 || atTwo.length < 2); i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    expect(atOne).toEqual([batch(board, 1), batch(board, 3)]);
    expect(atTwo.map((b) => b[0]!.seq).sort()).toEqual([1, 3]);
    expect(atTwo).toHaveLength(2);
    await one.close();
    await two.close();
  });
});
