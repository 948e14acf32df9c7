// An index declared after a data directory's documents were written is built from them when the
// store opens: a find through it sees the old documents too (the operators' audit filters were
// added over audit rows already stored).
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import { planFor } from '../../store/embedded/plan.js';
import { SCHEMA } from '../../store/ports/schema.js';
import type { TokenRecord } from '../../store/ports/store.js';
import { tempDir, type TempDir } from '../support/temp.js';

describe('embedded store indexes', () => {
  const dirs: TempDir[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await d.remove();
  });

  it('builds an index missing from an existing directory at open, from the documents already there', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const first = await openEmbeddedStore(dir.path);
    for (let i = 0; i < 1200; i++)
      await first.audit.insert({
        _id: `row-${i}`,
        version: 1,
        at: i,
        actor: 'user:op',
        action: 'admin.revoke',
        projectId: null,
        target: `account:${i % 3}`,
        data: {},
      });
    await first.close();

    // As a directory written before the target index existed: its keys and its mark are gone.
    const env = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
    const index = env.openDB({ name: 'audit.target_at' });
    const meta = env.openDB({ name: '_meta' });
    await env.transaction(() => {
      for (const { key } of index.getRange({})) index.remove(key);
      meta.remove('index:audit.target_at');
    });
    expect([...index.getRange({})]).toHaveLength(0);
    await env.close();

    const again = await openEmbeddedStore(dir.path);
    try {
      const rows = await again.audit.find({ target: 'account:1' }, { sort: [['at', -1]] });
      expect(rows).toHaveLength(400);
      expect(rows[0]!._id).toBe('row-1198');
      expect(await again.audit.count({ target: 'account:2' })).toBe(400);
    } finally {
      await again.close();
    }
  }, 60_000);

  it('reads a non-unique index an earlier version wrote (the _id as value too), and writes the key alone now', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const row = (i: number) => ({
      _id: `row-${i}`,
      version: 1,
      at: i,
      actor: 'user:op',
      action: 'admin.revoke',
      projectId: 'p1',
      target: null,
      data: {},
    });
    const first = await openEmbeddedStore(dir.path);
    await first.audit.insert(row(1));
    await first.close();

    // As an earlier version left it: each non-unique entry named its _id twice, in the key and as the value.
    const env = open({ path: dir.path, noSubdir: false, maxDbs: 256 });
    const index = env.openDB({ name: 'audit.projectId_at' });
    expect([...index.getRange({})]).toEqual([{ key: ['p1', 1, 'row-1'], value: null }]);
    await index.put(['p1', 1, 'row-1'], 'row-1');
    await env.close();

    const again = await openEmbeddedStore(dir.path);
    try {
      await again.audit.insert(row(2));
      expect((await again.audit.find({ projectId: 'p1' })).map((r) => r._id)).toEqual(['row-1', 'row-2']);
      expect(await again.audit.select({ projectId: 'p1', at: { $gte: 0 } }, ['at'])).toEqual([
        { _id: 'row-1', at: 1 },
        { _id: 'row-2', at: 2 },
      ]);
      expect(await again.audit.count({ projectId: 'p1' })).toBe(2);
    } finally {
      await again.close();
    }
  });

  it('reads one of several values of an indexed field (`$in`) through the index, a range a value, not by a scan', async () => {
    const plan = planFor<TokenRecord>({ agentId: { $in: ['a', 'b', 'a'] } }, SCHEMA.tokens);
    expect(plan).toMatchObject({ kind: 'points', prefixes: [['a'], ['b']], exact: true });
    expect(planFor<TokenRecord>({ agentId: { $in: ['a'] }, revoked: false }, SCHEMA.tokens)).toMatchObject({
      kind: 'points',
      exact: false,
    });

    const dir = await tempDir();
    dirs.push(dir);
    const store = await openEmbeddedStore(dir.path);
    const token = (i: number) => ({
      _id: `t-${i}`,
      version: 1,
      accountId: `acc-${i % 4}`,
      agentId: `agent-${i % 10}`,
      secretHash: `hash-${i}`,
      prefix: 'agb_x',
      name: `token ${i}`,
      scope: 'workspace' as const,
      boardId: null,
      role: 'member' as const,
      resource: null,
      revoked: i % 3 === 0,
      createdAt: i,
      lastUsedAt: null,
      expiresAt: null,
    });
    for (let i = 0; i < 60; i++) await store.tokens.insert(token(i) as never);
    const wanted = ['agent-2', 'agent-7', 'agent-missing'];
    const byIndex = await store.tokens.select({ agentId: { $in: wanted } }, ['agentId', 'createdAt'], {
      sort: [['createdAt', -1]],
      limit: 5,
    });
    const all = await store.tokens.find({});
    const expected = all
      .filter((t) => wanted.includes(t.agentId!))
      .sort((a, b) => b.createdAt - a.createdAt)
      .slice(0, 5);
    expect(byIndex).toEqual(expected.map((t) => ({ _id: t._id, agentId: t.agentId, createdAt: t.createdAt })));
    expect(await store.tokens.count({ agentId: { $in: wanted } })).toBe(12);
    expect(await store.tokens.count({ agentId: { $in: wanted }, revoked: false })).toBe(
      all.filter((t) => wanted.includes(t.agentId!) && !t.revoked).length,
    );
    await store.close();
  });
});
