// Where client/src/schema.ts comes from: the OpenAPI document a node serves at /docs/openapi.json,
// turned into types by openapi-typescript. The script and the drift test share it, so both see the
// same document (a node on its default configuration: the document shows configured figures).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { startTestServer } from '../../test/support/server.js';

export const SCHEMA_FILE = fileURLToPath(new URL('../src/schema.ts', import.meta.url));

/** The document a freshly started node serves. */
export async function servedDocument(): Promise<OpenAPI3> {
  const srv = await startTestServer();
  try {
    const res = await fetch(`${srv.url}/docs/openapi.json`);
    if (!res.ok) throw new Error(`GET /docs/openapi.json: ${res.status}`);
    return (await res.json()) as OpenAPI3;
  } finally {
    await srv.stop();
  }
}

/** The TypeScript that `document` generates, as committed in client/src/schema.ts. */
export async function schemaSource(document: OpenAPI3): Promise<string> {
  const header = `${COMMENT_HEADER}// Regenerate with \`npm run client:types\` (client/scripts/generate-types.ts); test/client/drift.test.ts fails when it is stale.\n\n`;
  return header + astToString(await openapiTS(document, { alphabetize: true }));
}

export const committedSchema = (): Promise<string> => readFile(SCHEMA_FILE, 'utf8');
