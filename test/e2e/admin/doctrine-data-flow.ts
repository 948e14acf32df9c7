// The operators' export and import of a board holding doctrine entries and spec clauses, run on
// each store: they leave as their own line kinds (never the expected blind-test digest), are never
// taken for items, and come back on the imported board, which loads whole.
import { describe, expect, it } from 'vitest';
import { serveStore, type OpenedStore } from '../../support/stores.js';
import { digest, newBoard } from '../../support/board.js';
import { confirmedOperator, operatorEmail } from '../../support/operators.js';
import { Client, signedUp, type Res } from '../../support/server.js';

type Line = { kind: string; record?: Record<string, unknown> };
const lines = (res: Res): Line[] =>
  res.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

export function doctrineDataFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`doctrine and spec in export and import on the ${name} store`, () => {
    const opEmail = operatorEmail();
    const served = serveStore(open, { OPERATOR_EMAILS: opEmail });

    it('exports entries and clauses as their own lines without the expected digest, and imports them onto the new board', async () => {
      const board = await newBoard(served.srv.url);
      const admin = await board.agent('admin', 'admin');
      const member = await board.agent('m');
      await admin.post('/api/doctrine', {
        slug: 'tests-first',
        title: 'Tests first',
        text: 'x',
        expectedDigest: digest('e'),
      });
      await member.post('/api/doctrine/tests-first/agree');
      await admin.post('/api/doctrine/tests-first/ratify');
      expect(
        (await member.post('/api/doctrine/tests-first/blind-test', { answerDigest: digest('e') })).body.result,
      ).toBe('pass');
      await admin.post('/api/spec', { title: 'Auth', text: 'Every route authenticates.' });
      await admin.post('/api/spec', { title: 'Limits', text: 'x' });
      await member.post('/api/items', { title: 'login', doctrine: ['tests-first'], spec: ['S-2'] });
      const operator = (await confirmedOperator(served.srv, opEmail)).client;

      const exported = await operator.get(`/api/admin/export?projectId=${board.projectId}`);
      expect(exported.status, exported.text).toBe(200);
      expect(exported.text).not.toContain('e'.repeat(64));
      const all = lines(exported);
      expect(all[0]).toMatchObject({ leftOut: { fields: { doctrine: ['life.expectedDigest'] } } });
      expect(all.filter((l) => l.kind === 'item').map((l) => l.record!.workId)).toEqual(['W-1']);
      expect(all.filter((l) => l.kind === 'doctrine').map((l) => l.record)).toEqual([
        expect.objectContaining({
          slug: 'tests-first',
          status: 'ratified',
          life: expect.objectContaining({ agreements: [expect.objectContaining({ by: member.principal })] }),
        }),
      ]);
      expect(all.filter((l) => l.kind === 'spec').map((l) => l.record!.clauseId)).toEqual(['S-1', 'S-2']);

      const target = await signedUp(served.srv.url);
      const imported = await operator.post('/api/admin/import', { userId: target.accountId, lines: all });
      expect(imported.status, imported.text).toBe(201);
      expect(imported.body).toMatchObject({ items: 1 });
      const newId = imported.body.projectId as string;
      const loaded = (await served.srv.store.boards.load(newId))!;
      expect(loaded.items.map((e) => e.workId).sort()).toEqual(['W-1', 'doctrine:tests-first', 'spec:S-1', 'spec:S-2']);
      expect(loaded.record.entries).toBe(4);

      const token = await target.client.post('/api/accounts/tokens', {
        name: 'agent',
        scope: 'workspace',
        projectId: newId,
        role: 'admin',
      });
      const agent = new Client(served.srv.url, { authorization: `Bearer ${token.body.secret}` });
      const entry = (await agent.get('/api/doctrine')).body.entries[0];
      expect(entry).toMatchObject({
        slug: 'tests-first',
        status: 'ratified',
        agreements: 1,
        expectedDigestSet: false,
        blindTests: { pass: 1, fail: 0 },
      });
      expect(
        (await agent.get('/api/spec')).body.clauses.map((c: { clauseId: string; linkedBy: string[] }) => [
          c.clauseId,
          c.linkedBy,
        ]),
      ).toEqual([
        ['S-1', []],
        ['S-2', ['W-1']],
      ]);
      expect((await agent.get('/api/items/W-1')).body.doctrineLinks).toEqual([
        { slug: 'tests-first', level: 'advisory', status: 'ratified' },
      ]);
      expect((await agent.post('/api/spec', { title: 'Next', text: 'x' })).body.clauseId).toBe('S-3');
      expect((await agent.get('/api/metrics')).body.blindTests).toEqual({ pass: 1, fail: 0 });

      const gapped = all.filter((l) => !(l.kind === 'spec' && l.record!.clauseId === 'S-1'));
      const res = await operator.post('/api/admin/import', {
        userId: target.accountId,
        lines: [...gapped.slice(0, -1), { kind: 'end', lines: gapped.length }],
      });
      expect(res.body.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('S-1 to S-<n>') });
    });
  });
}
