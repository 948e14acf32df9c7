// CSRF for cookie-session writes: a browser write must come from our own origin. Writes must
// also be application/json (415 otherwise), which no cross-site form can send without a
// CORS preflight we never grant; the Origin check closes the rest.

export function isCrossSite(headers: Record<string, string>, allowedOrigins: ReadonlySet<string>): boolean {
  const site = headers['sec-fetch-site'];
  if (site === 'cross-site') return true;
  const origin = headers['origin'];
  if (origin === undefined) return false;
  if (origin === 'null') return true;
  if (allowedOrigins.has(origin)) return false;
  const host = headers['host'];
  return !(host && (origin === `http://${host}` || origin === `https://${host}`));
}
