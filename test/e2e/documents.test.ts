// The generated documents: the registry at /api/errors, OpenAPI 3.1 at /docs/openapi.json, pages.
import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors/registry.js';
import { Client, startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
let client: Client;
beforeAll(async () => {
  srv = await startTestServer();
  client = new Client(srv.url);
});
afterAll(async () => {
  await srv.stop();
});

describe('GET /api/errors', () => {
  it('serves every registered code with status, meaning, fix, raisedBy, links and a withheld observedResolution', async () => {
    const res = await client.get('/api/errors');
    expect(res.status).toBe(200);
    const codes = res.body.errors.map((e: { code: string }) => e.code);
    expect(codes).toEqual(ERROR_CODES);
    const unauthenticated = res.body.errors.find((e: { code: string }) => e.code === 'UNAUTHENTICATED');
    expect(unauthenticated).toMatchObject({
      status: 401,
      example: null,
      links: { contract: 'http://board.test/docs/openapi.json' },
    });
    expect(unauthenticated.raisedBy).toEqual(
      expect.arrayContaining(['GET /api/auth/me', 'POST /api/auth/change-password']),
    );
    expect(unauthenticated.observedResolution).toMatchObject({
      status: 'insufficient-aggregate',
      observations: null,
      distinctWorkspaces: null,
      path: null,
    });
  });
});

describe('GET /docs/openapi.json', () => {
  it('is a valid OpenAPI 3.1.0 document, version 0.0.0-demo', async () => {
    const res = await client.get('/docs/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('0.0.0-demo');
    const result = await validate(structuredClone(res.body));
    expect(result.valid ? [] : result.errors, JSON.stringify(result).slice(0, 2000)).toEqual([]);
    expect(result.specification).toBe('OpenAPI');
  });

  it('covers every route of the table, with its error codes', async () => {
    const doc = (await client.get('/docs/openapi.json')).body;
    const routes = srv.server.routes;
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const op = doc.paths[route.path]?.[route.method];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      for (const code of route.errors) expect(JSON.stringify(op.responses), `${route.path} ${code}`).toContain(code);
    }
    const signup = doc.paths['/api/auth/signup'].post;
    expect(signup.requestBody.content['application/json'].schema.properties).toHaveProperty('referralCode');
    expect(signup.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
    expect(Object.keys(signup.responses)).toEqual(
      expect.arrayContaining(['201', '400', '403', '409', '413', '415', '429', '500', '503']),
    );
    expect(doc.paths['/api/whoami'].get.responses['200'].headers).toHaveProperty('X-RateLimit-Write-Reset');
    expect(doc.paths['/api/ws'].get.responses).toHaveProperty('101');
  });

  it('holds every operator route the contract names (DOMAIN.md "Operators" paths), each under the admin tag', async () => {
    const doc = (await client.get('/docs/openapi.json')).body;
    const named = [
      'get /api/admin/codebase',
      'get /api/admin/users',
      'get /api/admin/users/{userId}',
      'get /api/admin/costmodel',
      'get /api/admin/feedback',
      'post /api/admin/users/{userId}/contact',
      'get /api/admin/utilization',
      'get /api/admin/audit',
      'get /api/admin/abuse',
      'get /api/admin/metrics',
      'get /api/admin/durability',
      'get /api/admin/allowlist',
      'post /api/admin/allowlist',
      'delete /api/admin/allowlist',
      'get /api/admin/webhooks',
      'get /api/admin/export',
      'post /api/admin/import',
      'get /api/admin/billing/dunning',
      'get /api/admin/billing/{userId}',
      'post /api/admin/users/{userId}/subscription',
      'post /api/admin/users/{userId}/refund',
      'post /api/admin/plan',
      'post /api/admin/users/{userId}/revoke',
      'get /api/admin/tokens',
      'delete /api/admin/tokens/{tokenId}',
      'post /api/admin/users/{userId}/delete',
      'post /api/admin/users/{userId}/purge',
      'post /api/admin/users/{userId}/restore',
      'post /api/admin/users/{userId}/impersonate',
      'post /api/admin/impersonation/end',
      'post /api/admin/webhooks/{eventId}/replay',
      'post /api/admin/feedback/{id}/resolve',
      'post /api/admin/feedback/{id}/dismiss',
      'post /api/admin/feedback/{id}/promote',
    ];
    const missing = named.filter((r) => !doc.paths[r.split(' ')[1]!]?.[r.split(' ')[0]!]);
    expect(missing).toEqual([]);
    const adminOps = Object.entries(doc.paths as Record<string, Record<string, { tags: string[] }>>).flatMap(
      ([path, ops]) =>
        path.startsWith('/api/admin/')
          ? Object.entries(ops).map(([method, op]) => ({ op: `${method} ${path}`, tags: op.tags }))
          : [],
    );
    expect(adminOps.length).toBeGreaterThanOrEqual(named.length);
    expect(adminOps.filter((o) => o.tags.join() !== 'admin')).toEqual([]);
  });
});

describe('pages and probes', () => {
  it('serves /changelog and /dispatches as HTML, /healthz and /readyz as JSON', async () => {
    for (const path of ['/changelog', '/dispatches']) {
      const res = await client.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.text).toContain('<h1>');
    }
    expect((await client.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await client.get('/readyz')).body).toEqual({
      status: 'ready',
      store: 'embedded',
      bus: 'local',
      sockets: 0,
    });
  });
});
