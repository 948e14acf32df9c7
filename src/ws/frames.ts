// Event messages as sockets get them, serialized and encoded once however many sockets an event goes
// to, each naming its actor when the node knows the name (names.ts).
import type { CommittedEvent } from '../../actors/board-actor.js';

/** An event as its frame carries it; `actorName`, the name every reader of the board may see, when known. */
export const eventBody = (e: CommittedEvent, actorName: string | undefined) => ({
  type: e.type,
  actor: e.actor,
  ...(actorName !== undefined && { actorName }),
  workId: e.workId,
  at: new Date(e.at).toISOString(),
  data: e.data,
});

export const eventFrame = (boardId: string, e: CommittedEvent, actorName?: string): Uint8Array =>
  Buffer.from(JSON.stringify({ type: 'event', boardId, seq: e.seq, event: eventBody(e, actorName) }));

/** Each event's frame, kept as long as the event is. */
export class EventFrames {
  private readonly frames = new WeakMap<CommittedEvent, Uint8Array>();

  /** `nameOf`: an actor's name as known now (Names.nameOf); absent, frames carry ids only. */
  constructor(private readonly nameOf: (principal: string) => string | undefined = () => undefined) {}

  of(boardId: string, e: CommittedEvent): Uint8Array {
    let bytes = this.frames.get(e);
    if (bytes === undefined) this.frames.set(e, (bytes = this.fresh(boardId, e)));
    return bytes;
  }

  /** A frame not kept: an event cut to one reader's view. */
  fresh(boardId: string, e: CommittedEvent): Uint8Array {
    return eventFrame(boardId, e, this.nameOf(e.actor));
  }
}

/** The events in seq order (a batch from the bus usually is already). */
export const inSeqOrder = (events: CommittedEvent[]): CommittedEvent[] =>
  events.every((e, i) => i === 0 || events[i - 1]!.seq < e.seq) ? events : [...events].sort((a, b) => a.seq - b.seq);
