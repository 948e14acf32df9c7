// The firehose's sampling and order, on a simulated clock: at most 200 events in any second per
// socket (never 400 across the edge of a fixed window), the rest counted and reported; each board's
// events in seq order; a socket far behind skips events rather than being cut off.
import { describe, expect, it } from 'vitest';
import type { CommittedEvent } from '../../actors/board-actor.js';
import { Firehose, SlidingWindow } from '../../src/ws/firehose.js';
import { FIREHOSE } from '../../src/ws/protocol.js';

class Sink {
  frames: { boardId: string; boardName: string | null; seq: number; type: string; at: number }[] = [];
  reports: number[] = [];
  waiting = 0;
  backlog = () => this.waiting;
}

function rig(boardName?: (boardId: string) => Promise<string | null>) {
  let now = 1_000_000;
  const hearsAll: boolean[] = [];
  const firehose = new Firehose<Sink>({
    clock: () => now,
    hearAll: async (on) => void hearsAll.push(on),
    ...(boardName && { boardName }),
    transmit(conn, message) {
      const m = JSON.parse(typeof message === 'string' ? message : Buffer.from(message).toString());
      if (m.type === 'firehose')
        conn.frames.push({ boardId: m.boardId, boardName: m.boardName, seq: m.seq, type: m.event.type, at: now });
      else conn.reports.push(m.count);
      return true;
    },
  });
  const seqs = new Map<string, number>();
  const commit = (boardId: string, n: number, type = 'item.created'): CommittedEvent[] => {
    const from = seqs.get(boardId) ?? 0;
    seqs.set(boardId, from + n);
    const events = Array.from(
      { length: n },
      (_, i) =>
        ({ seq: from + i + 1, type, actor: 'agent:a', workId: null, at: now, data: {} }) as unknown as CommittedEvent,
    );
    firehose.deliver(boardId, events);
    return events;
  };
  return { firehose, commit, hearsAll, advance: (ms: number) => void (now += ms), now: () => now };
}

describe('the firehose', () => {
  it('asks for every board’s commits when its first socket is on, and gives them up when its last is off', () => {
    const { firehose, hearsAll } = rig();
    const [one, two] = [new Sink(), new Sink()];
    firehose.watch(one, {});
    firehose.watch(one, { boards: ['b1'] }); // narrowed anew: still on
    firehose.watch(two, {});
    expect(hearsAll).toEqual([true]);
    expect(firehose.unwatch(one)).toBe(true);
    expect(firehose.unwatch(one)).toBe(false);
    expect(hearsAll).toEqual([true]);
    firehose.unwatch(two);
    expect(hearsAll).toEqual([true, false]);
    firehose.watch(two, {});
    expect(hearsAll).toEqual([true, false, true]);
  });

  it('names each board once its name is read, one read at a time, and reads it again a minute later', async () => {
    const reads: string[] = [];
    let name = 'Payments';
    const { firehose, commit, advance } = rig(async (boardId) => (reads.push(boardId), name));
    const sink = new Sink();
    firehose.watch(sink, {});
    commit('b1', 2);
    commit('b1', 1); // the read under way is not asked again
    expect(sink.frames.map((f) => f.boardName)).toEqual([null, null, null]);
    await Promise.resolve();
    commit('b1', 1);
    expect(sink.frames.at(-1)!.boardName).toBe('Payments');
    expect(reads).toEqual(['b1']);
    name = 'Payments v2';
    advance(59_000);
    commit('b1', 1);
    expect(reads).toEqual(['b1']);
    advance(1_000);
    commit('b1', 1); // a minute on: read again, the old name meanwhile
    expect(sink.frames.at(-1)!.boardName).toBe('Payments');
    await Promise.resolve();
    commit('b1', 1);
    expect(sink.frames.at(-1)!.boardName).toBe('Payments v2');
    expect(reads).toEqual(['b1', 'b1']);
  });

  it('never lets more than the limit through in any window, across the edges of fixed windows too', () => {
    const window = new SlidingWindow(200, 1000);
    const taken: number[] = [];
    // Bursts at the end of one second and the start of the next, then a steady trickle.
    for (let t = 0; t < 5000; t += 7)
      for (let k = 0; k < (t % 1000 > 950 || t % 1000 < 50 ? 30 : 1); k++) if (window.take(t)) taken.push(t);
    for (let i = 0; i + 200 < taken.length; i++)
      expect(taken[i + 200]! - taken[i]!, `take ${i + 200}`).toBeGreaterThanOrEqual(1000);
    expect(taken.length).toBeGreaterThan(800); // and it does let the limit through
  });

  it('sends 200 of a 500-event burst, reports the 300 left out, and 200 more a second later', () => {
    const { firehose, commit, advance } = rig();
    const sink = new Sink();
    firehose.watch(sink, {});
    commit('b1', 500);
    expect(sink.frames.map((f) => f.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    advance(999);
    commit('b1', 10);
    expect(sink.frames).toHaveLength(200);
    firehose.report();
    expect(sink.reports).toEqual([310]);
    firehose.report();
    expect(sink.reports).toEqual([310]); // nothing more left out: no report
    advance(1);
    commit('b1', 250);
    expect(sink.frames).toHaveLength(400);
    expect(sink.frames.slice(200).map((f) => f.seq)).toEqual(Array.from({ length: 200 }, (_, i) => 511 + i));
    firehose.report();
    expect(sink.reports).toEqual([310, 50]);
    firehose.close();
  });

  it('keeps each board in seq order: a late or repeated batch is not sent again', () => {
    const { firehose, commit } = rig();
    const sink = new Sink();
    firehose.watch(sink, {});
    const first = commit('b1', 3);
    commit('b2', 2);
    const second = commit('b1', 2);
    firehose.deliver('b1', first); // a bus message heard again, or late
    firehose.deliver('b1', second.slice(0, 1));
    expect(sink.frames.filter((f) => f.boardId === 'b1').map((f) => f.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(sink.frames.filter((f) => f.boardId === 'b2').map((f) => f.seq)).toEqual([1, 2]);
    firehose.close();
  });

  it('narrows by board and event type before sampling, so a quiet board is not drowned by a busy one', () => {
    const { firehose, commit } = rig();
    const narrow = new Sink();
    const all = new Sink();
    firehose.watch(narrow, { boards: ['quiet'], types: ['lease.', 'item.done'] });
    firehose.watch(all, {});
    commit('busy', 300);
    commit('quiet', 1, 'lease.granted');
    commit('quiet', 1, 'item.created');
    commit('quiet', 1, 'item.done');
    commit('quiet', 1, 'item.done.not');
    expect(narrow.frames.map((f) => `${f.boardId}:${f.seq}:${f.type}`)).toEqual([
      'quiet:1:lease.granted',
      'quiet:3:item.done',
    ]);
    expect(all.frames).toHaveLength(200);
    expect(all.frames.some((f) => f.boardId === 'quiet')).toBe(false);
    firehose.report();
    expect(narrow.reports).toEqual([]);
    expect(all.reports).toEqual([104]);
    // Subscribing again replaces the filter and keeps the socket's window.
    expect(firehose.watch(all, { boards: ['quiet'] })).toBe(false);
    commit('quiet', 1);
    expect(all.frames).toHaveLength(200);
    firehose.report();
    expect(all.reports).toEqual([104, 1]);
    firehose.close();
  });

  it('counts as left out what a socket far behind would have been sent', () => {
    const { firehose, commit } = rig();
    const sink = new Sink();
    firehose.watch(sink, {});
    sink.waiting = 300 * 1024;
    commit('b1', 5);
    sink.waiting = 0;
    commit('b1', 5);
    expect(sink.frames.map((f) => f.seq)).toEqual([6, 7, 8, 9, 10]);
    firehose.report();
    expect(sink.reports).toEqual([5]);
    expect(firehose.unwatch(sink)).toBe(true);
    expect(firehose.unwatch(sink)).toBe(false);
    expect(FIREHOSE.perSecond).toBe(200);
  });
});
