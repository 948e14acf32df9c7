// npm run client:types: regenerates client/src/schema.ts from the document the server serves now.
import { writeFile } from 'node:fs/promises';
import { SCHEMA_FILE, schemaSource, servedDocument } from './schema-source.js';

const source = await schemaSource(await servedDocument());
await writeFile(SCHEMA_FILE, source);
console.log(`wrote ${SCHEMA_FILE} (${source.length} characters)`);
