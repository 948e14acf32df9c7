// A reply as the transport writes it (a RawResponse): the request id first, the rate headers, the
// reply's own, and the error envelope for a refusal. What is alike across many responses (a fixed
// route's answer, a spent budget's refusal) is written out once and only the request id added.
import { STATUS_CODES } from 'node:http';
import { SESSION_COOKIE } from '../auth/authenticator.js';
import type { AppError } from '../errors/app-error.js';
import { ErrorEnvelopes } from '../errors/envelope.js';
import type { ObservedResolution, ResolutionObserver } from '../errors/observed-resolution.js';
import { ERRORS } from '../errors/registry.js';
import type { RateDenial } from '../ratelimit/budgets.js';
import { serializeCookie } from './cookies.js';
import { JSON_CONTENT_TYPE, type BodyStream, type Reply, type Route, type SetCookie } from './route.js';

export interface RawResponse {
  status: number;
  headers: [string, string][];
  /** A stream is written chunk by chunk as its source yields (src/http/uws/respond.ts). */
  body: string | Buffer | BodyStream;
  /** Close the connection after writing (a body we refused to read). */
  close?: boolean;
  /**
   * `headers` after the first, `count` of them, as the transport writes them (`\r\n${name}: ${value}`
   * each): made once for responses alike but their first header (the request id). A header added
   * after them (X-Impersonated-By) is written after.
   */
  head?: ResponseHead;
}

/**
 * Header lines written out once for many responses (RawResponse.head): the first of them by name,
 * its value and every line after it as bytes. A string would be flattened, measured and encoded
 * by uWS on every response.
 */
export interface ResponseHead {
  name: string;
  value: Buffer;
  count: number;
}

/** `headers` as the transport writes the lines after the first (RawResponse.head). */
function headOf(headers: readonly (readonly [string, string])[]): ResponseHead {
  let value = headers[0]?.[1] ?? '';
  for (let i = 1; i < headers.length; i++) value += `\r\n${headers[i]![0]}: ${headers[i]![1]}`;
  return { name: headers[0]?.[0] ?? '', value: Buffer.from(value), count: headers.length };
}

/** What an error response is made of: an AppError, or a spent budget's denial. */
export type Refusal = Pick<AppError, 'code' | 'status' | 'message' | 'details' | 'headers'>;

export class Responses {
  /** Each fixed reply as a response, built once: all but its request id (the first header), which each answer puts first. */
  private readonly fixedResponses = new WeakMap<
    Route,
    { status: number; rest: RawResponse['headers']; head: ResponseHead; body: RawResponse['body'] }
  >();
  /** The error envelopes, written as JSON with each code's record serialised once. */
  private readonly envelopes: ErrorEnvelopes;
  /**
   * Each denial's response but its request id (the first header, and the id's place in the body),
   * per resolution, the other headers also as written (RawResponse.head).
   */
  private readonly denials = new WeakMap<
    RateDenial,
    {
      resolution: ObservedResolution;
      headers: RawResponse['headers'];
      head: ResponseHead;
      before: Buffer;
      after: Buffer;
    }
  >();

  constructor(
    publicUrl: string,
    private readonly cookieSecure: boolean,
    private readonly observer: ResolutionObserver,
  ) {
    this.envelopes = new ErrorEnvelopes(publicUrl);
  }

  /** The answer of a route with a fixed reply. */
  fixed(route: Route & { fixed: Reply }, requestId: string): RawResponse {
    let fixed = this.fixedResponses.get(route);
    if (!fixed) {
      const whole = this.of(route.fixed, '');
      const rest = whole.headers.slice(1);
      this.fixedResponses.set(route, (fixed = { status: whole.status, rest, head: headOf(rest), body: whole.body }));
    }
    return {
      status: fixed.status,
      headers: [['x-request-id', requestId], ...fixed.rest],
      body: fixed.body,
      head: fixed.head,
    };
  }

  /**
   * A spent budget's refusal, as `error` makes it, but made once per denial and resolution:
   * the rate stage gives the same RateDenial while the budgets it reports stay alike, so under a
   * flood each refusal adds only its request id to a response written out before, its other
   * header lines included (RawResponse.head).
   */
  denial(denial: RateDenial, requestId: string): RawResponse {
    const resolution = this.observer.resolution(denial.code);
    let kept = this.denials.get(denial);
    if (kept?.resolution !== resolution) {
      const [before, after] = this.envelopes.around(denial.code, resolution, denial.message, denial.details);
      const made = this.of(
        { status: denial.status, contentType: JSON_CONTENT_TYPE, body: '', headers: denial.headers },
        '',
      );
      const rest = made.headers.slice(1);
      kept = { resolution, headers: rest, head: headOf(rest), before: Buffer.from(before), after: Buffer.from(after) };
      this.denials.set(denial, kept);
    }
    const headers: [string, string][] = [['x-request-id', requestId]];
    for (const header of kept.headers) headers.push(header);
    // The body as bytes: a string made of the three would be flattened, measured and encoded again by uWS.
    const id = JSON.stringify(requestId);
    const idBytes = Buffer.byteLength(id);
    const body = Buffer.allocUnsafe(kept.before.length + idBytes + kept.after.length);
    body.set(kept.before, 0);
    body.write(id, kept.before.length);
    body.set(kept.after, kept.before.length + idBytes);
    return { status: denial.status, headers, body, head: kept.head };
  }

  error(error: Refusal, requestId: string, cookies: Record<string, string>, headers = error.headers): RawResponse {
    const code = error.code;
    const clear: SetCookie[] | undefined =
      code === 'UNAUTHENTICATED' && cookies[SESSION_COOKIE] !== undefined
        ? [{ name: SESSION_COOKIE, value: '', maxAge: 0 }]
        : undefined;
    return this.of(
      {
        status: error.status,
        contentType: JSON_CONTENT_TYPE,
        body: this.envelopes.json(
          code,
          this.observer.resolution(code),
          code === 'INTERNAL' ? ERRORS.INTERNAL.meaning : error.message,
          requestId,
          error.details,
        ),
        headers,
        ...(clear && { cookies: clear }),
      },
      requestId,
    );
  }

  /** The reply as written: its own headers win over the rate headers of a route that sends them. */
  of(reply: Reply, requestId: string, rateHeaders?: Record<string, string>): RawResponse {
    const headers: [string, string][] = [['x-request-id', requestId]];
    const own = reply.headers;
    if (own?.['cache-control'] === undefined) headers.push(['cache-control', 'no-store']);
    // for…in, not a spread or Object.entries: this runs for every response (V8 merges spreads slowly).
    if (rateHeaders) for (const k in rateHeaders) if (own?.[k] === undefined) headers.push([k, rateHeaders[k]!]);
    if (own) for (const k in own) headers.push([k, own[k]!]);
    if (reply.cookies)
      for (const c of reply.cookies) headers.push(['set-cookie', serializeCookie(c, this.cookieSecure)]);
    if (reply.body === undefined) return { status: reply.status, headers, body: '' };
    if (reply.contentType) {
      headers.push(['content-type', reply.contentType]);
      return { status: reply.status, headers, body: reply.body as string | BodyStream };
    }
    headers.push(['content-type', JSON_CONTENT_TYPE]);
    return { status: reply.status, headers, body: JSON.stringify(reply.body) };
  }
}

const statusLines = new Map<number, string>();
export const statusLine = (status: number): string =>
  statusLines.get(status) ?? statusLines.set(status, `${status} ${STATUS_CODES[status] ?? 'Unknown'}`).get(status)!;
