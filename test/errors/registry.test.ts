import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_WHILE_PAUSED } from '../../src/board/commands.js';
import { ERROR_CODES, ERRORS, raisedApart, type ErrorCode } from '../../src/errors/registry.js';
import { MINIMUM_DISTINCT_WORKSPACES, ResolutionObserver } from '../../src/errors/observed-resolution.js';
import { operationOf, type Route } from '../../src/http/route.js';
import { raisedBy } from '../../src/openapi/raised-by.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Every code of the contract's Part 7 table and DOMAIN.md, with its status.
const REQUIRED: Record<string, number> = {
  INVALID_EMAIL: 400,
  INVALID_INPUT: 400,
  INVALID_JSON: 400,
  INVALID_PASSWORD: 400,
  REFERRAL_CODE_INVALID: 400,
  INVALID_PROJECT_ID: 400,
  INVALID_DISPLAY_NAME: 400,
  INVALID_REWIND_POINT: 400,
  INVALID_REWIND_SLICE: 400,
  REWIND_CONFIRMATION_REQUIRED: 400,
  REWIND_VERSION_REQUIRED: 400,
  INVALID_BILLING_INTERVAL: 400,
  INVALID_CURSOR: 400,
  INVALID_PROJECT_NAME: 400,
  PROVIDER_EVENT_ACCOUNT_MISMATCH: 400,
  PROVIDER_EVENT_INVALID: 400,
  PROVIDER_SIGNATURE_INVALID: 400,
  ACCOUNT_DELETE_CONFIRM_MISMATCH: 400,
  COMMIT_ID_FORBIDDEN: 400,
  CONFLICTING_DEPENDENCIES: 400,
  CROSS_PROJECT_FOLD: 400,
  CROSS_PROJECT_PARENT: 400,
  DOCTRINE_LINK_NOT_FOUND: 400,
  EVIDENCE_EXISTS: 400,
  EXPIRED_TOKEN: 400,
  FINDING_REQUIRED: 400,
  AUTH_REQUIRED: 401,
  INVALID_SERVICE_TOKEN: 401,
  UNAUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_CURRENT_PASSWORD: 401,
  CSRF_REJECTED: 403,
  PROJECT_SCOPE_DENIED: 403,
  FREE_PROJECT_LIMIT: 403,
  VERIFY_NOT_INDEPENDENT: 403,
  REWIND_POINT_NOT_FOUND: 404,
  EMAIL_TAKEN: 409,
  PROJECT_REQUIRED: 409,
  BILLING_PRO_REQUIRED: 409,
  BILLING_CUSTOMER_CONFLICT: 409,
  BILLING_CUSTOMER_REQUIRED: 409,
  BILLING_INTERVAL_UNSUPPORTED: 409,
  BILLING_SUBSCRIPTION_CONFLICT: 409,
  BILLING_SUBSCRIPTION_REQUIRED: 409,
  REWIND_VERSION_MISMATCH: 409,
  HEAD_MISMATCH: 409,
  INVALID_TRANSITION: 409,
  LEASE_NOT_HELD: 409,
  LEASE_EXPIRED: 409,
  NOTHING_READY: 409,
  ITEM_NOT_READY: 409,
  VERSION_MISMATCH: 409,
  BODY_TOO_LARGE: 413,
  JSON_REQUIRED: 415,
  REWIND_SLICE_INTEGRITY: 422,
  REWIND_SLICE_SCOPE: 422,
  RATE_LIMITED: 429,
  FEEDBACK_LIMIT: 429,
  INTERNAL: 500,
  PROVIDER_REQUEST_FAILED: 502,
  PROVIDER_RESPONSE_INVALID: 502,
  PROVIDER_UNAVAILABLE: 502,
  AUTH_UNAVAILABLE: 503,
  REFERRAL_UNAVAILABLE: 503,
  BILLING_UNAVAILABLE: 503,
  SNAPSHOT_UNAVAILABLE: 503,
  BOARD_BUSY: 503,
};

describe('error registry', () => {
  // Which operations raise a code is read from the route table: a node's, with its pipeline.
  let srv: TestServer;
  let routes: readonly Route[];
  let operations: Record<ErrorCode, string[]>;
  beforeAll(async () => {
    srv = await startTestServer();
    routes = srv.server.routes;
    operations = raisedBy(routes);
  });
  afterAll(async () => {
    await srv.stop();
  });

  it.each(Object.entries(REQUIRED))('holds %s with status %i', (code, status) => {
    expect(ERRORS).toHaveProperty(code);
    expect(ERRORS[code as keyof typeof ERRORS].status).toBe(status);
  });

  it('gives every code a meaning, a fix and the operations that raise it', () => {
    for (const code of ERROR_CODES) {
      const spec = ERRORS[code];
      expect(spec.meaning.length, code).toBeGreaterThan(10);
      expect(spec.fix.length, code).toBeGreaterThan(5);
      expect(operations[code].length, code).toBeGreaterThan(0);
      expect(code).toMatch(/^[A-Z][A-Z_]+$/);
    }
  });

  it('uses the contract’s own wording for the four detailed codes', () => {
    expect(ERRORS.AUTH_REQUIRED.meaning).toBe(
      'The request reached an authenticated surface with no usable workspace credential.',
    );
    expect(ERRORS.AUTH_UNAVAILABLE.fix).toBe('Stop and report. No credential works until the operator restores auth.');
    expect(ERRORS.PROVIDER_UNAVAILABLE.fix).toBe('Retry later with backoff.');
    expect(operations.ACCOUNT_DELETE_CONFIRM_MISMATCH).toContain('DELETE /api/account');
  });

  it('calls a board a board, as the pages and docs do ("Delete a board or upgrade to Pro")', () => {
    // `projectId` and the /api/projects paths keep their names; the words a person reads do not say "project".
    const project = /\bprojects?\b/i;
    for (const code of ERROR_CODES) {
      expect(ERRORS[code].meaning.replace(/\/api\/projects\b/g, ''), code).not.toMatch(project);
      expect(ERRORS[code].fix.replace(/\/api\/projects\b/g, ''), code).not.toMatch(project);
    }
    expect(ERRORS.FREE_PROJECT_LIMIT.fix).toBe('Delete a board or upgrade to Pro.');
  });

  it('is what GET /api/errors serves as each code’s raisedBy', async () => {
    const served = (await (await fetch(`${srv.url}/api/errors`)).json()) as {
      errors: { code: ErrorCode; raisedBy: string[] }[];
    };
    expect(Object.fromEntries(served.errors.map((e) => [e.code, e.raisedBy]))).toEqual(operations);
  });

  it('names no route by hand: a route that raises a code lists it', () => {
    const table = new Set(routes.map(operationOf));
    for (const code of ERROR_CODES)
      expect(
        raisedApart(code).filter((op) => table.has(op)),
        code,
      ).toEqual([]);
  });

  it('lists the account lock’s ACCOUNT_BUSY on every route that takes it, and ACCOUNT_DELETED on sign-in', () => {
    expect(operations.ACCOUNT_BUSY).toEqual(
      expect.arrayContaining([
        'POST /api/projects',
        'POST /api/boards',
        'POST /api/boards/transfers/{transferId}/accept',
        'POST /api/accounts/claim-anonymous',
        'POST /api/accounts/provision',
        'POST /api/projects/{projectId}/claim',
        'POST /api/boards/{projectId}/claim',
      ]),
    );
    expect(operations.ACCOUNT_DELETED).toContain('POST /api/auth/login');
  });

  it('names apart, as operations, only the socket, which is not a route', () => {
    const table = new Set(routes.map(operationOf));
    const apart = ERROR_CODES.flatMap(raisedApart).filter((op) => /^[A-Z]+ \//.test(op) && !table.has(op));
    expect([...new Set(apart)].sort()).toEqual(['GET /api/ws', 'GET /api/ws (subscribe message)']);
  });

  it('lists for BOARD_PAUSED the routes that send a command a paused board refuses', () => {
    const sending = routes.filter((r) => r.sends?.some((kind) => REFUSED_WHILE_PAUSED.has(kind))).map(operationOf);
    expect(sending.length).toBeGreaterThan(0);
    expect([...operations.BOARD_PAUSED].sort()).toEqual(sending.sort());
  });
});

describe('observed resolution', () => {
  it('stays withheld below three distinct workspaces, then reports the most common next operation', () => {
    let now = 1_000_000;
    const observer = new ResolutionObserver(() => now);
    const fail = (ws: string, next: string) => {
      observer.failed(ws, 'INVALID_INPUT');
      now += 1000;
      observer.succeeded(ws, next);
    };
    fail('w1', 'POST /api/items');
    fail('w1', 'POST /api/items');
    fail('w2', 'POST /api/items');
    expect(observer.resolution('INVALID_INPUT')).toEqual({
      code: 'INVALID_INPUT',
      source: 'next-successful-operation',
      scope: 'all-workspaces',
      correlationWindowHours: 24,
      minimumDistinctWorkspaces: MINIMUM_DISTINCT_WORKSPACES,
      status: 'insufficient-aggregate',
      observations: null,
      distinctWorkspaces: null,
      path: null,
    });
    fail('w3', 'POST /api/claim');
    expect(observer.resolution('INVALID_INPUT')).toMatchObject({
      status: 'observed',
      observations: 4,
      distinctWorkspaces: 3,
      path: 'POST /api/items',
    });
    expect(observer.resolution('EMAIL_TAKEN').status).toBe('insufficient-aggregate');
  });

  it('correlates only within 24 hours, and forgets observations older than the window', () => {
    let now = 0;
    const observer = new ResolutionObserver(() => now);
    for (const ws of ['a', 'b', 'c']) observer.failed(ws, 'LEASE_EXPIRED');
    now += 25 * 3600_000;
    for (const ws of ['a', 'b', 'c']) observer.succeeded(ws, 'POST /api/claim');
    expect(observer.resolution('LEASE_EXPIRED').status).toBe('insufficient-aggregate');
    for (const ws of ['a', 'b', 'c']) {
      observer.failed(ws, 'LEASE_EXPIRED');
      observer.succeeded(ws, 'POST /api/claim');
    }
    expect(observer.resolution('LEASE_EXPIRED').status).toBe('observed');
    now += 25 * 3600_000;
    expect(observer.resolution('LEASE_EXPIRED').status).toBe('insufficient-aggregate');
  });
});
