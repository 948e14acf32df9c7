// Every audit action the server writes has words in the console (web/src/ui/event-words.ts), not
// its parts read as words: the actions are found where src/ names them (`action: '…'`, or a union
// of them), an operator's under `admin.` (src/admin/audit.ts) and a live watch's under `live.`
// (src/ws/operator-access.ts). A new action without words fails here.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventWords, hasWords } from '../../web/src/ui/event-words.js';

const SRC = join(import.meta.dirname, '../../src');

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

/** Each `action: '…'` (or `'…' | '…'`) named in src/, with the prefix its writer puts before it. */
async function namedActions(): Promise<{ file: string; action: string; prefix: string }[]> {
  const found: { file: string; action: string; prefix: string }[] = [];
  for (const path of await sources(SRC)) {
    const file = relative(SRC, path);
    const prefix = file.startsWith('admin/') ? 'admin.' : file.startsWith('ws/') ? 'live.' : '';
    for (const [, union] of (await readFile(path, 'utf8')).matchAll(/action: ((?:'[a-z_.]+'(?: \| )?)+)/g))
      for (const [, action] of union!.matchAll(/'([a-z_.]+)'/g))
        // Outside the operators' rooms an undotted name is a command's, not an audit action.
        if (prefix || action!.includes('.')) found.push({ file, action: action!, prefix });
  }
  return found;
}

describe('the audit actions in words', () => {
  it('finds the actions src/ writes, the newest among them', async () => {
    const actions = (await namedActions()).map((a) => a.action);
    for (const a of ['item.gate.lower', 'enrollment.mint', 'enrollment.revoke', 'billing.subscription.cancel'])
      expect(actions).toContain(a);
  });

  it('has words for every one of them', async () => {
    const missing = (await namedActions())
      .filter(({ action, prefix }) => !hasWords(action) && !hasWords(`${prefix}${action}`))
      .map(({ file, action, prefix }) => `${file}: ${prefix}${action}`);
    expect(missing, 'audit actions the console shows only as their parts').toEqual([]);
  });

  it('reads a name it has no words for as its parts', () => {
    expect(hasWords('billing.subscription.cancel')).toBe(true);
    expect(eventWords('billing.subscription.cancel')).toBe('Subscription of a deleted board cancelled');
    expect(eventWords('made.up_name')).toBe('Made up name');
  });
});
