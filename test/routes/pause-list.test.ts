// The pause list has one source, the command kinds a paused board refuses (src/board/commands.ts
// REFUSED_WHILE_PAUSED): a route lists 409 BOARD_PAUSED because it sends one of them, never by hand.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_WHILE_PAUSED } from '../../src/board/commands.js';
import { operationOf, type Route } from '../../src/http/route.js';
import { startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
let routes: readonly Route[];
beforeAll(async () => {
  srv = await startTestServer();
  routes = srv.server.routes;
});
afterAll(async () => {
  await srv.stop();
});

const refusedWhilePaused = (route: Route) => (route.sends ?? []).some((kind) => REFUSED_WHILE_PAUSED.has(kind));

describe('BOARD_PAUSED among a route’s errors', () => {
  it('is there exactly when the route sends a command a paused board refuses', () => {
    for (const route of routes)
      expect(route.errors.includes('BOARD_PAUSED'), operationOf(route)).toBe(refusedWhilePaused(route));
  });

  it('names claims and every change to the work graph or an item’s state (DOMAIN.md "Pausing a board")', () => {
    const paused = routes.filter((r) => r.errors.includes('BOARD_PAUSED')).map(operationOf);
    expect(paused.sort()).toEqual(
      [
        'POST /api/claim',
        'POST /api/submit',
        'POST /api/supersede',
        'POST /api/verify',
        'POST /api/items',
        'POST /api/items/batch',
        'PATCH /api/items/{workId}',
        'POST /api/items/reorder',
        'POST /api/items/{workId}/state',
        'POST /api/items/{workId}/override',
        'POST /api/items/{workId}/progress',
        // An operator's promote of feedback creates the entry's item on its board.
        'POST /api/admin/feedback/{id}/promote',
      ].sort(),
    );
  });

  it('is not listed where the commands sent go on while paused: renew and release, comments, doctrine, spec, the pause itself, a rewind', () => {
    const sendingOnly = routes.filter((r) => r.sends?.length && !refusedWhilePaused(r)).map(operationOf);
    expect(sendingOnly).toEqual(
      expect.arrayContaining([
        'POST /api/lease',
        'POST /api/items/{workId}/comments',
        'POST /api/doctrine',
        'POST /api/spec',
        'PATCH /api/projects/{projectId}',
        'POST /api/account/rewind',
      ]),
    );
  });
});
