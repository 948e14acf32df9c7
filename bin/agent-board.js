#!/usr/bin/env node
// The agent-board command. In a checkout (npm install brings tsx, a dev dependency) it runs the
// TypeScript source, so it is never stale; where only the build is present (the Docker image, or a
// checkout installed without dev dependencies) it runs dist/src/cli/main.js from `npm run build`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const source = new URL('src/cli/main.ts', root);
const built = new URL('dist/src/cli/main.js', root);

async function typescriptRunner() {
  try {
    const { register } = await import('tsx/esm/api');
    register({ tsconfig: fileURLToPath(new URL('tsconfig.json', root)) });
    return true;
  } catch {
    return false;
  }
}

if (existsSync(source) && (await typescriptRunner())) await import(source.href);
else if (existsSync(built)) await import(built.href);
else {
  process.stderr.write(
    'agent-board: neither the TypeScript runner (npm install) nor the build (npm run build) is present\n',
  );
  process.exitCode = 1;
}
