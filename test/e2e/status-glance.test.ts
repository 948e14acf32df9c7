// GET /api/status over real HTTP: agents online (heartbeats within 120 s) and last activity (the
// board's newest event), shown in the OpenAPI document like the rest of the snapshot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { Client } from '../support/server.js';
import { startTestServer, type TestServer } from '../support/server.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

const at = (iso: string | null) => (iso === null ? null : Date.parse(iso));

describe('GET /api/status', () => {
  it('counts the agents online and tells when the board last changed', async () => {
    const board = await newBoard(srv.url);
    const a = await board.agent('a');
    const b = await board.agent('b');

    const fresh = (await a.get('/api/status')).body;
    expect(fresh).toMatchObject({ lastSeq: 0, agentsOnline: 0, lastActivityAt: null });

    const before = Date.now();
    await a.post('/api/items', { title: 'first' });
    const created = (await a.get('/api/status')).body;
    expect(at(created.lastActivityAt)).toBeGreaterThanOrEqual(before);
    expect(at(created.lastActivityAt)).toBeLessThanOrEqual(Date.now());

    await a.post('/api/status/heartbeat', { status: 'working', workId: 'W-1' });
    await b.post('/api/status/heartbeat', { status: 'idle' });
    await a.post('/api/status/heartbeat', { status: 'working', note: 'again' });
    const beating = (await b.get('/api/status')).body;
    expect(beating.agentsOnline).toBe(2);
    expect(beating.lastActivityAt).toBe(created.lastActivityAt); // heartbeats are presence, not changes

    srv.advance(121_000);
    const quiet = (await a.get('/api/status')).body;
    expect(quiet).toMatchObject({ agentsOnline: 0, lastActivityAt: created.lastActivityAt });

    await b.post('/api/status/heartbeat', {});
    const claimed = await b.post('/api/claim', {});
    expect(claimed.status).toBe(200);
    const later = (await a.get('/api/status')).body;
    expect(later.agentsOnline).toBe(1);
    expect(at(later.lastActivityAt)).toBeGreaterThanOrEqual(at(created.lastActivityAt)! + 121_000);
  });

  it('documents both in the OpenAPI reply schema', async () => {
    const doc = (await new Client(srv.url).get('/docs/openapi.json')).body;
    const schema = doc.paths['/api/status'].get.responses['200'].content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['agentsOnline', 'lastActivityAt']));
    expect(schema.properties.agentsOnline).toMatchObject({ type: 'integer' });
    expect(schema.properties.lastActivityAt.anyOf ?? schema.properties.lastActivityAt.type).toBeTruthy();
    expect(schema.properties.lastActivityAt.description).toMatch(/newest event/);
  });
});
