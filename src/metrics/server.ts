// Serves GET /metrics on a port of its own (METRICS_PORT), apart from the public one, because the
// numbers reveal load. With METRICS_TOKEN a scrape must also send `Authorization: Bearer <token>`,
// compared in constant time. node:http is enough here: one scrape every few seconds.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface MetricsEndpoint {
  port: number;
  close(): Promise<void>;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Whether the Authorization header carries the token (both hashed first: equal lengths, no early exit). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(header ?? '')?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}

export function serveMetrics(
  registry: Registry,
  where: { host: string; port: number; token: string | undefined },
  logger: Logger,
): Promise<MetricsEndpoint> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return void res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
    if (where.token !== undefined && !bearerMatches(req.headers.authorization, where.token)) {
      return void res
        .writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"', 'content-type': 'text/plain' })
        .end('unauthorized\n');
    }
    registry.metrics().then(
      (text) =>
        res
          .writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' })
          .end(req.method === 'HEAD' ? undefined : text),
      (e: unknown) => {
        logger.error({ err: e }, 'metrics: collecting failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('collecting metrics failed\n');
      },
    );
  });
  // A scrape is small and quick: a client holding a connection open gets nothing for it.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((done) => (server.closeAllConnections(), server.close(() => done()))),
      });
    });
  });
}
