// docs/operating.md lists the indexes a node creates at start on MongoDB (issue 43: "indexes
// created at start, idempotently, and listed"). The list is written by hand beside the schema
// they are made from (store/ports/schema.ts SCHEMA), so an index added to one and not the other
// would go unsaid: every collection the schema gives an index must have its row, and say exactly those.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCHEMA, type IndexSpec } from '../../store/ports/schema.js';

const DOC = new URL('../../docs/operating.md', import.meta.url);

/** The table's rows by collection: each index as the doc writes it (`a+b`, with ` unique`). */
function documented(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of readFileSync(DOC, 'utf8').split('\n')) {
    const cells = /^\s*\|\s*`(\w+)`\s*\|(.*)\|\s*$/.exec(line);
    if (!cells) continue;
    const indexes = [...cells[2]!.matchAll(/`([\w+]+)`( unique)?/g)].map(
      ([, fields, unique]) => `${fields}${unique ?? ''}`,
    );
    rows.set(cells[1]!, indexes);
  }
  return rows;
}

const spelled = (index: IndexSpec): string => `${index.fields.join('+')}${index.unique ? ' unique' : ''}`;

describe('the indexes docs/operating.md lists', () => {
  it('are the schema’s, collection by collection', () => {
    const rows = documented();
    const missing: string[] = [];
    for (const [collection, indexes] of Object.entries(SCHEMA)) {
      if (!indexes.length) continue;
      const row = rows.get(collection);
      if (!row) missing.push(collection);
      else expect(row.sort(), collection).toEqual(indexes.map(spelled).sort());
    }
    expect(missing, 'collections with indexes and no row').toEqual([]);
  });
});
