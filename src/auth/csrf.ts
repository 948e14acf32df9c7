// CSRF for cookie-session writes, three locks:
// - writes must be application/json (415 otherwise), which no cross-site form can send without
//   a CORS preflight we never grant;
// - the browser's own word on where the request comes from (Sec-Fetch-Site, Origin, or Referer
//   when Origin is absent) must name a configured origin;
// - a signed double-submit token: HMAC-SHA-256 of the session id under the server's CSRF key,
//   handed to the page in every session response and sent back in X-CSRF-Token, compared in
//   constant time. A cross-site page can neither read it nor compute it.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const CSRF_HEADER = 'x-csrf-token';

/** Whether the browser says the request comes from a site other than a configured origin. */
export function isCrossSite(headers: Record<string, string>, allowedOrigins: ReadonlySet<string>): boolean {
  if (headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = headers['origin'];
  if (origin !== undefined) return !allowedOrigins.has(origin);
  const referer = headers['referer'];
  return referer !== undefined && !allowedOrigins.has(originOf(referer));
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}

/** The token a session's page sends back on every write. */
export function csrfTokenFor(key: Buffer, sessionId: string): string {
  return createHmac('sha256', key).update(`csrf:${sessionId}`).digest('base64url');
}

export function csrfTokenMatches(key: Buffer, sessionId: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const expected = Buffer.from(csrfTokenFor(key, sessionId));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
