// One request's answer (Exchange), the server's queue of whole responses written together at the
// end of a turn (HeldWrites), and the body read that copies uWS's chunks under a size cap.
import type uWS from 'uWebSockets.js';
import { isBodyStream } from '../route.js';
import type { RawResponse } from '../responses.js';
import type { HttpHandlers } from './types.js';
import { pour, writeWhole, type Client } from './respond.js';

/**
 * One request's answer: written once, and never after its client went away. A class, not closures
 * made per request: tsx (the shipped `npm start`) keeps function names by defining each closure's
 * name as it is made, which cost more per request than the rest of this bookkeeping.
 */
export class Exchange {
  private aborted = false;
  /** Stops reading a body still on its way. */
  cancelBody: (() => void) | null = null;
  private readonly client: Client = { gone: false, wake: null };
  /** A whole response waiting in `held`. */
  private response: RawResponse | null = null;

  constructor(
    private readonly res: uWS.HttpResponse,
    private readonly handlers: HttpHandlers,
    private readonly held: HeldWrites,
    readonly requestId: string,
    private readonly headOnly: boolean,
  ) {}

  /**
   * Needed only by a response that outlives the uWS callback: set before the first await, or right
   * after learning the response is not ready (still inside the callback).
   */
  guard(): void {
    this.res.onAborted(() => {
      this.aborted = true;
      this.client.gone = true;
      this.client.wake?.(false); // a stream waiting for the client to take its chunks stops
      this.cancelBody?.(); // a client gone mid-body must not stay in flight
    });
  }

  /**
   * Writes the response (`inCallback`: from inside uWS's callback for the request); a streamed one
   * resolves once its last chunk is written (or the client left).
   */
  write(response: RawResponse, inCallback = false): Promise<void> | undefined {
    const body = response.body;
    if (this.aborted) {
      if (isBodyStream(body)) void body[Symbol.asyncIterator]().return?.();
      return;
    }
    this.aborted = true; // one response only
    if (isBodyStream(body)) return pour(this.res, response, body, this.headOnly, this.client);
    writeWhole(this.res, response, this.headOnly, inCallback);
  }

  /**
   * Answers a request whose response was not ready inside the uWS callback (null: the client went
   * away), then counts it finished. A whole response waits for the end of this turn of the event
   * loop (see HeldWrites); a streamed one starts at once.
   */
  answerLater(pending: Promise<RawResponse | null>): void {
    pending.then(
      (response) => this.answer(response),
      () => this.answer(this.handlers.refuse('internal', this.requestId)),
    );
  }

  /**
   * Writes the response, then counts the request finished: a streamed one once its last chunk is
   * out, any other at once, also when the write throws (the error goes on to the caller).
   */
  finish(response: RawResponse, inCallback = false): void {
    let streaming: Promise<void> | undefined;
    try {
      streaming = this.write(response, inCallback);
    } finally {
      if (streaming) void streaming.finally(() => this.handlers.finished());
      else this.handlers.finished();
    }
  }

  /** Writes a whole response ready inside uWS's callback with the others held this turn (see HeldWrites). */
  hold(response: RawResponse): void {
    this.guard();
    this.response = response;
    this.held.add(this);
  }

  private answer(response: RawResponse | null): void {
    if (response === null) return this.handlers.finished();
    if (isBodyStream(response.body)) return this.finish(response);
    this.response = response;
    this.held.add(this);
  }

  /** The response answer() held back, written now (unless the client left meanwhile). */
  writeHeld(): void {
    const response = this.response!;
    this.response = null;
    this.finish(response);
  }
}

/**
 * Exchanges whose whole response is ready, written together once the event loop's poll phase has
 * run every request that arrived with them. Written one by one as each is ready, every response
 * woke its client on its own: on the status bench (32 connections), 12 µs of the 45 µs a request
 * took was the send, most of it the kernel waking the client. Written together, the first send
 * wakes the client and the rest find it awake: 31,000 → 42,000 req/s, 39 → 29 µs of server CPU a
 * request. A response waits at most for the requests read in the same turn. One per server.
 */
export class HeldWrites {
  private readonly held: Exchange[] = [];

  add(exchange: Exchange): void {
    if (this.held.length === 0) setImmediate(this.writeAll);
    this.held.push(exchange);
  }

  private readonly writeAll = (): void => {
    for (const exchange of this.held.splice(0)) {
      try {
        exchange.writeHeld();
      } catch {
        // uWS refused the write (the connection is closing): the others still go out
      }
    }
  };
}

export const TOO_LARGE = Symbol('too large');
export const ABORTED = Symbol('aborted');

/** The body a request may send: `limit`, or `larger.limit` once its caller is admitted. */
export interface BodyCap {
  limit: number;
  /** Asked only of a body that passes `limit`. */
  larger?: { limit: number; admit: () => Promise<boolean> };
}

/**
 * Reads the whole body, copying each chunk (uWS reuses its buffer); past the cap nothing more is
 * kept. A body passing `limit` on a route with a larger one waits, paused, until the caller is
 * known to be admitted to it.
 */
export function readBody(
  res: uWS.HttpResponse,
  cap: BodyCap,
  onCancel: (cancel: () => void) => void,
): Promise<Buffer | typeof TOO_LARGE | typeof ABORTED> {
  return new Promise((resolve) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let limit = cap.limit;
    let last = false;
    let done = false;
    let deciding = false;
    const finish = (outcome: Buffer | typeof TOO_LARGE | typeof ABORTED) => {
      if (done) return;
      done = true;
      chunks = [];
      resolve(outcome);
    };
    onCancel(() => finish(ABORTED));
    const settle = () => {
      if (size > limit) return finish(TOO_LARGE);
      if (last) finish(Buffer.concat(chunks, size));
    };
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      last = isLast;
      if (size > (cap.larger?.limit ?? limit)) return finish(TOO_LARGE);
      chunks.push(Buffer.from(chunk.slice(0)));
      if (size <= limit || !cap.larger || limit === cap.larger.limit) return settle();
      if (deciding) return;
      deciding = true;
      res.pause();
      void cap.larger.admit().then((admitted) => {
        if (done) return;
        limit = admitted ? cap.larger!.limit : cap.limit;
        res.resume(); // always: a body that ended while paused leaves the connection paused for the next request
        settle();
      });
    });
  });
}
