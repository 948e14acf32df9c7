// Event messages as sockets get them, serialized and encoded once however many sockets an event goes to.
import type { CommittedEvent } from '../../actors/board-actor.js';

export const eventFrame = (boardId: string, e: CommittedEvent): Uint8Array =>
  Buffer.from(
    JSON.stringify({
      type: 'event',
      boardId,
      seq: e.seq,
      event: { type: e.type, actor: e.actor, workId: e.workId, at: new Date(e.at).toISOString(), data: e.data },
    }),
  );

/** Each event's frame, kept as long as the event is. */
export class EventFrames {
  private readonly frames = new WeakMap<CommittedEvent, Uint8Array>();

  of(boardId: string, e: CommittedEvent): Uint8Array {
    let bytes = this.frames.get(e);
    if (bytes === undefined) this.frames.set(e, (bytes = eventFrame(boardId, e)));
    return bytes;
  }
}

/** The events in seq order (a batch from the bus usually is already). */
export const inSeqOrder = (events: CommittedEvent[]): CommittedEvent[] =>
  events.every((e, i) => i === 0 || events[i - 1]!.seq < e.seq) ? events : [...events].sort((a, b) => a.seq - b.seq);
