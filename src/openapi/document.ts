// The OpenAPI 3.1 document, generated from the route table, its zod schemas and the error registry.
import { z } from 'zod';
import { ERRORS, type ErrorCode } from '../errors/registry.js';
import { routeErrors } from '../http/route-errors.js';
import { operationOf, type Route } from '../http/route.js';
import { SESSION_COOKIE } from '../auth/authenticator.js';
import { SOCKET_DESCRIPTION } from '../ws/protocol.js';

export const API_VERSION = '0.0.0-demo';

const RATE_HEADERS = ['', 'Request-', 'Write-'].flatMap((p) =>
  ['Limit', 'Remaining', 'Reset'].map((k) => `X-RateLimit-${p}${k}`),
);

/**
 * Input fields accepted only to be refused with a precise code (a commit id where an operation
 * takes none): the document shows them as never allowed (`not: {}`), with the reason.
 */
export const refusedInputs = z.registry<{ description: string }>();

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema: out }) => {
      const refused = refusedInputs.get(zodSchema);
      if (refused) {
        for (const key of Object.keys(out)) delete (out as Record<string, unknown>)[key];
        Object.assign(out, { not: {}, description: refused.description });
      }
    },
  }) as Record<string, unknown>;
  return rest;
};

const SECURITY: Record<Route['auth'], Record<string, string[]>[] | undefined> = {
  none: [],
  'session-optional': [{}, { session: [] }],
  session: [{ session: [] }],
  'bearer-or-session': [{ bearer: [] }, { session: [] }],
  operator: [{ session: [] }],
};

function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code]);
  const out: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: list.map((c) => `${c}: ${ERRORS[c].meaning}`).join('\n'),
      headers: { 'x-request-id': { $ref: '#/components/headers/RequestId' } },
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/ErrorEnvelope' },
              { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: list } } } } },
            ],
          },
        },
      },
    };
  }
  return out;
}

const PROJECT_ID_SCHEMA = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]{1,64}$' };

/** Path parameters whose form the server checks (anything else: 400 INVALID_PROJECT_ID, 404 ITEM_NOT_FOUND). */
const PATH_PARAMETER_SCHEMAS: Record<string, Record<string, unknown>> = {
  projectId: PROJECT_ID_SCHEMA,
  workId: { type: 'string', pattern: '^W-\\d{1,9}$' },
};

function operation(route: Route): Record<string, unknown> {
  const parameters: Record<string, unknown>[] = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: PATH_PARAMETER_SCHEMAS[m[1]!] ?? { type: 'string' },
  }));
  if (route.project) {
    parameters.push({
      name: 'projectId',
      in: 'query',
      required: false,
      description:
        'The project (board) to act on. Defaults to the token’s own board, else the account’s starred default project.',
      schema: PROJECT_ID_SCHEMA,
    });
  }
  if (route.query) {
    const schema = jsonSchema(route.query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, s] of Object.entries(schema.properties ?? {}))
      parameters.push({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: s });
  }
  const responses: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const headers: Record<string, unknown> = { 'x-request-id': { $ref: '#/components/headers/RequestId' } };
    if (route.rateHeaders) for (const h of RATE_HEADERS) headers[h] = { $ref: `#/components/headers/${h}` };
    responses[status] = {
      description: spec.description,
      headers,
      ...(spec.schema || spec.contentType
        ? {
            content: {
              [spec.contentType ?? 'application/json']: {
                schema: spec.schema ? jsonSchema(spec.schema, 'output') : { type: 'string' },
              },
            },
          }
        : {}),
    };
  }
  Object.assign(responses, errorResponses(routeErrors(route)));
  const body =
    route.bodyKind === 'json' || route.bodyKind === 'optional-json'
      ? {
          requestBody: {
            required: route.bodyKind === 'json',
            content: { 'application/json': { schema: route.body ? jsonSchema(route.body, 'input') : {} } },
          },
        }
      : route.bodyKind === 'raw'
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': { schema: { type: 'string', description: 'The raw body exactly as signed.' } },
              },
            },
          }
        : {};
  return {
    operationId: operationOf(route)
      .replace(/[^A-Za-z0-9]+/g, '_')
      .replace(/^_|_$/g, ''),
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.group],
    security: SECURITY[route.auth],
    ...(parameters.length ? { parameters } : {}),
    ...body,
    responses,
  };
}

/** The WebSocket endpoint is not a route of the table; its protocol is described here. */
const SOCKET_OPERATION = {
  operationId: 'GET_api_ws',
  summary: 'WebSocket: live board events.',
  description: SOCKET_DESCRIPTION,
  tags: ['realtime'],
  security: [{ bearer: [] }, { session: [] }],
  responses: {
    '101': { description: 'Switching protocols.' },
    ...errorResponses([
      'AUTH_REQUIRED',
      'INVALID_SERVICE_TOKEN',
      'EXPIRED_TOKEN',
      'UNAUTHENTICATED',
      'CSRF_REJECTED',
      'NOT_FOUND',
      'RATE_LIMITED',
      'AUTH_UNAVAILABLE',
    ]),
  },
};

export function buildOpenApi(routes: readonly Route[], publicUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method] = operation(route);
  paths['/api/ws'] = { get: SOCKET_OPERATION };
  const headers: Record<string, unknown> = {
    RequestId: { description: 'Echoes a valid incoming x-request-id, or a new UUID.', schema: { type: 'string' } },
  };
  for (const h of RATE_HEADERS)
    headers[h] = {
      description: h.endsWith('Reset') ? 'Unix epoch seconds when the window resets.' : `Integer budget figure (${h}).`,
      schema: { type: 'integer', minimum: h.endsWith('Limit') ? 1 : 0 },
    };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent coordination board',
      version: API_VERSION,
      description:
        'A hosted work board for fleets of AI coding agents. Errors share one envelope; every code, its meaning and fix are listed at GET /api/errors. ' +
        'CSRF: cookie-session writes (and signup/login) must be same-origin: a cross-site Origin or Sec-Fetch-Site gives 403 CSRF_REJECTED, and writes must be application/json. ' +
        'Bodies over the configured cap (256 KiB by default) give 413 BODY_TOO_LARGE. ' +
        'Every GET operation also answers HEAD: the same status and headers as the GET, without the body.',
    },
    servers: [{ url: publicUrl }],
    tags: [...new Set([...routes.map((r) => r.group), 'realtime'])].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
        bearer: { type: 'http', scheme: 'bearer', description: 'A service token (agb_…).' },
      },
      headers,
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: [
                'code',
                'status',
                'message',
                'meaning',
                'fix',
                'example',
                'links',
                'observedResolution',
                'requestId',
              ],
              properties: {
                code: { type: 'string', enum: Object.keys(ERRORS) },
                status: { type: 'integer' },
                message: { type: 'string' },
                meaning: { type: 'string' },
                fix: { type: 'string' },
                example: { type: 'null' },
                links: {
                  type: 'object',
                  properties: { contract: { type: 'string' }, changelog: { type: 'string' }, blog: { type: 'string' } },
                },
                observedResolution: { $ref: '#/components/schemas/ObservedResolution' },
                requestId: { type: 'string' },
                details: { type: 'object' },
              },
            },
          },
        },
        ObservedResolution: {
          type: 'object',
          required: [
            'code',
            'source',
            'scope',
            'correlationWindowHours',
            'minimumDistinctWorkspaces',
            'status',
            'observations',
            'distinctWorkspaces',
            'path',
          ],
          properties: {
            code: { type: 'string' },
            source: { type: 'string' },
            scope: { type: 'string' },
            correlationWindowHours: { type: 'integer' },
            minimumDistinctWorkspaces: { type: 'integer' },
            status: { enum: ['insufficient-aggregate', 'observed'] },
            observations: { type: ['integer', 'null'] },
            distinctWorkspaces: { type: ['integer', 'null'] },
            path: { type: ['string', 'null'] },
          },
        },
      },
    },
  };
}
