// Probes and the documents generated from the route table and error registry.
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { errorRecord } from '../errors/envelope.js';
import { ERROR_CODES } from '../errors/registry.js';
import { defineRoute, JSON_CONTENT_TYPE, type Route } from '../http/route.js';
import { buildOpenApi } from '../openapi/document.js';
import { raisedBy } from '../openapi/raised-by.js';
import type { RouteDeps } from './deps.js';
import { CHANGELOG, DISPATCHES, renderPage } from './pages.js';

const Health = z.object({ status: z.literal('ok') });
const Ready = z.object({
  status: z.literal('ready'),
  store: z.string(),
  bus: z.enum(['local', 'ok', 'degraded']),
  sockets: z.number().int(),
});
const ErrorList = z.object({
  errors: z.array(
    z.object({
      code: z.string(),
      status: z.number().int(),
      meaning: z.string(),
      fix: z.string(),
      raisedBy: z.array(z.string()),
      example: z.null(),
      links: z.object({ contract: z.string(), changelog: z.string(), blog: z.string() }),
      observedResolution: z.object({}).loose(),
    }),
  ),
});

const ALIVE = { status: 200, body: { status: 'ok' } } as const;

const html = (body: string) => ({ status: 200, body, contentType: 'text/html; charset=utf-8' });

/** What the system routes use of the server's dependencies. */
export type SystemDeps = Pick<
  RouteDeps,
  'config' | 'store' | 'observer' | 'readiness' | 'busHealth' | 'sockets' | 'routes'
>;

export function systemRoutes(deps: SystemDeps): Route[] {
  const base = { group: 'system', auth: 'none', bodyKind: 'none', rate: 'none', errors: [] } as const;
  let openapi: string | null = null;

  return [
    defineRoute({
      ...base,
      method: 'get',
      path: '/healthz',
      summary: 'Liveness: the process answers.',
      description: 'Answered at once, without logging a request line.',
      responses: { 200: { description: 'Alive.', schema: Health } },
      fixed: ALIVE,
      handler: () => ALIVE,
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/readyz',
      summary: 'Readiness: the store answers and the node is not draining.',
      description:
        '`bus` says how events reach other nodes: local (single node), ok, or degraded (Redis away: REST and this node’s sockets keep working; clients catch up with since). `sockets` counts the WebSocket connections open on this node.',
      errors: ['SERVICE_UNAVAILABLE'],
      responses: { 200: { description: 'Ready.', schema: Ready } },
      async handler() {
        const problem = await deps.readiness();
        if (problem) throw new AppError('SERVICE_UNAVAILABLE', problem);
        return {
          status: 200,
          body: { status: 'ready', store: deps.store.kind, bus: deps.busHealth(), sockets: deps.sockets() },
        };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/errors',
      summary: 'The error registry: every code with its status, meaning, fix and the operations that raise it.',
      responses: { 200: { description: 'Every registered code.', schema: ErrorList } },
      handler() {
        const operations = raisedBy(deps.routes());
        const errors = ERROR_CODES.map((code) => ({
          ...errorRecord(code, deps.config.publicUrl, deps.observer.resolution(code)),
          raisedBy: operations[code],
        }));
        return { status: 200, body: { errors } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/docs/openapi.json',
      summary: 'This document: OpenAPI 3.1.0, generated from the route table.',
      responses: { 200: { description: 'The OpenAPI document.', contentType: 'application/json' } },
      handler() {
        openapi ??= JSON.stringify(buildOpenApi(deps.routes(), deps.config.publicUrl));
        return { status: 200, body: openapi, contentType: JSON_CONTENT_TYPE };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/changelog',
      summary: 'What changed, newest first.',
      responses: { 200: { description: 'HTML page.', contentType: 'text/html' } },
      handler: () => html(renderPage('Changelog', CHANGELOG)),
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/dispatches',
      summary: 'Notes from the team on how to use the service.',
      responses: { 200: { description: 'HTML page.', contentType: 'text/html' } },
      handler: () => html(renderPage('Dispatches', DISPATCHES)),
    }),
  ];
}
