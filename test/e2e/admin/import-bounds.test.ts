// The operators' import bounds what an export's lines may carry (issue 42, finding 7): an event's
// data nested past IMPORT_DATA_DEPTH_MAX levels or larger than IMPORT_EVENT_DATA_BYTES_MAX is
// 400 INVALID_INPUT naming its line, before anything is made (it answered 500 once the store
// choked on it); a body nested past JSON_DEPTH_MAX is 400 INVALID_JSON before that. Deep JSON in an
// ordinary request's body is a client's error too, never a 500. An item's fields are refused where
// the API would never have accepted them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_DATA_DEPTH_MAX, IMPORT_EVENT_DATA_BYTES_MAX } from '../../../src/admin/import.js';
import { JSON_DEPTH_MAX } from '../../../src/http/json-body.js';
import { newBoard } from '../../support/board.js';
import { expectError } from '../../support/expect-error.js';
import { operatorEmail, operatorSession } from '../../support/operators.js';
import { Client, signedUp, startTestServer, type Res, type TestServer } from '../../support/server.js';
import { verifyEmail } from '../../support/verify-email.js';

type Line = { kind: string; record?: Record<string, unknown>; [k: string]: unknown };

let srv: TestServer;
let operator: Client;
const opEmail = operatorEmail();
beforeAll(async () => {
  srv = await startTestServer({ OPERATOR_EMAILS: opEmail, ADDRESS_RATE_PER_MINUTE: '100000', BOARD_RATE_SCALE: '100' });
  operator = (await operatorSession(srv.url, opEmail)).client;
  await verifyEmail(srv, opEmail, operator);
});
afterAll(async () => {
  await srv.stop();
});

const nested = (depth: number): string => `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`;
const PLACEHOLDER = '"__data__"';

/** A small board's export, its lines as JSON values, with the index of its first event line. */
async function exported(): Promise<{ lines: Line[]; event: number }> {
  const board = await newBoard(srv.url);
  const agent = await board.agent('maker');
  expect((await agent.post('/api/items', { title: 'one' })).status).toBe(201);
  expect((await agent.post('/api/items', { title: 'two' })).status).toBe(201);
  const res = await operator.get(`/api/admin/export?projectId=${board.projectId}`);
  expect(res.status).toBe(200);
  const lines = res.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
  return { lines, event: lines.findIndex((l) => l.kind === 'event') };
}

/** Imports the export into a fresh account with one event's data replaced by `data` (JSON text). */
async function importWith(lines: Line[], event: number, data: string): Promise<{ res: Res; client: Client }> {
  const target = await signedUp(srv.url);
  const edited = lines.map((l, i) => (i === event ? { ...l, record: { ...l.record, data: '__data__' } } : l));
  const body = JSON.stringify({ userId: target.accountId, lines: edited }).replace(PLACEHOLDER, data);
  return {
    res: await operator.request('POST', '/api/admin/import', {
      raw: body,
      headers: { 'content-type': 'application/json' },
    }),
    client: target.client,
  };
}

async function boardsOf(client: Client): Promise<string[]> {
  return ((await client.get('/api/projects')).body.projects as { projectId: string }[]).map((p) => p.projectId);
}

describe('the import’s bounds on what a line carries', () => {
  it(`refuses an event whose data is nested deeper than ${IMPORT_DATA_DEPTH_MAX} levels with 400 INVALID_INPUT naming the line; nothing is made`, async () => {
    const { lines, event } = await exported();
    // Within the body’s own bound (JSON_DEPTH_MAX): 4 levels hold the data (the body, lines, the line, its record).
    const { res, client } = await importWith(lines, event, `{"deep":${nested(JSON_DEPTH_MAX - 4 - 1)}}`);
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.error.message).toMatch(
      new RegExp(`^Line ${event} \\(event \\d+\\): its data is nested deeper than ${IMPORT_DATA_DEPTH_MAX} levels`),
    );
    expect(res.body.error.details).toEqual({ field: `body.lines.${event}.record.data` });
    expect(await boardsOf(client)).toHaveLength(1); // the account's own board only
    // 20,000 levels (a 500 once): refused with the body itself, past JSON_DEPTH_MAX, before anything reads it.
    const deeper = await importWith(lines, event, `{"deep":${nested(20_000)}}`);
    expectError(deeper.res, 400, 'INVALID_JSON');
    expect(await boardsOf(deeper.client)).toHaveLength(1);
  });

  it('refuses an event nested one level past the bound, and takes one at the bound', async () => {
    const { lines, event } = await exported();
    // data itself is the first level.
    const over = await importWith(lines, event, nested(IMPORT_DATA_DEPTH_MAX + 1));
    expectError(over.res, 400, 'INVALID_INPUT');
    const at = await importWith(lines, event, nested(IMPORT_DATA_DEPTH_MAX));
    expect(at.res.status, at.res.text).toBe(201);
    expect(await boardsOf(at.client)).toContain(at.res.body.projectId);
  });

  it(
    `refuses an event whose data is larger than ${IMPORT_EVENT_DATA_BYTES_MAX} bytes with 400 INVALID_INPUT naming the line; nothing is made`,
    { timeout: 60_000 },
    async () => {
      const { lines, event } = await exported();
      const { res, client } = await importWith(
        lines,
        event,
        JSON.stringify({ pad: 'x'.repeat(4 * IMPORT_EVENT_DATA_BYTES_MAX) }),
      );
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.body.error.message).toMatch(
        new RegExp(`^Line ${event} \\(event \\d+\\): its data is larger than ${IMPORT_EVENT_DATA_BYTES_MAX} bytes`),
      );
      expect(res.body.error.details).toEqual({ field: `body.lines.${event}.record.data` });
      expect(await boardsOf(client)).toHaveLength(1);
      // One byte past the bound is refused; at the bound it is taken (`{"pad":""}` is 10 bytes).
      expectError(
        (await importWith(lines, event, JSON.stringify({ pad: 'x'.repeat(IMPORT_EVENT_DATA_BYTES_MAX - 9) }))).res,
        400,
        'INVALID_INPUT',
      );
      const at = await importWith(lines, event, JSON.stringify({ pad: 'x'.repeat(IMPORT_EVENT_DATA_BYTES_MAX - 10) }));
      expect(at.res.status, at.res.text).toBe(201);
    },
  );

  it('are stated in the route’s description in the OpenAPI document', async () => {
    const description: string = (await new Client(srv.url).get('/docs/openapi.json')).body.paths['/api/admin/import']
      .post.description;
    expect(description).toContain(
      `nests at most ${IMPORT_DATA_DEPTH_MAX} levels of objects and arrays and is at most ${IMPORT_EVENT_DATA_BYTES_MAX / 1024 / 1024} MiB as JSON`,
    );
  });
});

describe('the import’s items, as the API would have taken them', () => {
  const editItem = (lines: Line[], workId: string, edit: (r: Record<string, unknown>) => Record<string, unknown>) =>
    lines.map((l) => (l.kind === 'item' && l.record!.workId === workId ? { ...l, record: edit(l.record!) } : l));
  const life = (r: Record<string, unknown>) => r.life as Record<string, unknown>;
  const submitted = (r: Record<string, unknown>, head: string, verification?: Record<string, unknown>) => ({
    ...r,
    state: 'awaiting_verify',
    verify: 'required',
    life: {
      ...life(r),
      verify: 'required',
      submission: { head, by: 'agent:x', at: 1 },
      ...(verification && { verifications: [verification] }),
    },
  });
  const verdict = (evidence: string[]) => ({
    by: 'agent:y',
    head: 'abcdef1',
    verdict: 'fail',
    finding: null,
    at: 2,
    evidence,
  });

  it('refuses a head that is no commit id, evidence that is no digest, a doctrine link to nothing, W-01 beside W-1', async () => {
    const { lines } = await exported();
    const cases: [string, Line[]][] = [
      [
        'a submission head that is not a commit id',
        editItem(lines, 'W-1', (r) => submitted(r, 'see the diff: rm -rf build && patch -p1')),
      ],
      [
        'evidence that is not a digest',
        editItem(lines, 'W-1', (r) => submitted(r, 'abcdef1', verdict(['https://example.com/log.txt']))),
      ],
      ['a doctrine link to no entry', editItem(lines, 'W-1', (r) => ({ ...r, doctrine: ['no-such-entry'] }))],
      [
        'a second item with the same sequence number (W-01 beside W-1)',
        [
          ...lines
            .slice(0, -1)
            .flatMap((l) =>
              l.kind === 'item' && l.record!.workId === 'W-1'
                ? [l, { ...l, record: { ...l.record, workId: 'W-01' } }]
                : [l],
            ),
          { kind: 'end', lines: lines.length + 1 },
        ],
      ],
    ];
    const answered: Record<string, string> = {};
    for (const [what, edited] of cases) {
      const target = await signedUp(srv.url);
      const res = await operator.post('/api/admin/import', { userId: target.accountId, lines: edited });
      const made = (await boardsOf(target.client)).length - 1;
      answered[what] = `${res.status} ${res.body?.error?.code ?? ''}, ${made} board made`;
    }
    expect(answered).toEqual(Object.fromEntries(cases.map(([what]) => [what, '400 INVALID_INPUT, 0 board made'])));
    // The same fields as the API takes them are imported.
    const fine = editItem(lines, 'W-1', (r) => submitted(r, 'abcdef1', verdict([`sha256:${'a'.repeat(64)}`])));
    const target = await signedUp(srv.url);
    const res = await operator.post('/api/admin/import', { userId: target.accountId, lines: fine });
    expect(res.status, res.text).toBe(201);
  });
});
