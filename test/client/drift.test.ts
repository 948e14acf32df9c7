// The typed client's committed types (client/src/schema.ts) are what the server's OpenAPI
// document generates now: a route added or changed without `npm run client:types` fails here.
import { describe, expect, it } from 'vitest';
import { committedSchema, schemaSource, servedDocument } from '../../client/scripts/schema-source.js';

describe('client/src/schema.ts', () => {
  it('is what /docs/openapi.json generates now', async () => {
    const [generated, committed] = await Promise.all([servedDocument().then(schemaSource), committedSchema()]);
    if (generated !== committed) {
      const [now, then] = [generated.split('\n'), committed.split('\n')];
      const line = now.findIndex((text, i) => text !== then[i]);
      expect.fail(
        `client/src/schema.ts is stale: run \`npm run client:types\` and commit it.\n` +
          `First difference at line ${line + 1}:\n  committed: ${then[line] ?? '(end of file)'}\n  generated: ${now[line] ?? '(end of file)'}`,
      );
    }
    expect(committed).toContain('"/api/claim": {');
  });
});
