// Every registered code is answered somewhere in the tests (issue 15: "each reached by a test"):
// its name appears quoted in a test other than the registry's own table, which lists them all.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors/registry.js';

const TESTS = fileURLToPath(new URL('..', import.meta.url));
/** Codes no test reaches yet, and why. */
const NOT_YET: Record<string, string> = {};

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

it('finds every registered code in a test, but for the few it names and why', () => {
  const text = files(TESTS)
    .filter((f) => !f.endsWith('registry.test.ts') && !f.endsWith('codes-reached.test.ts'))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const unreached = ERROR_CODES.filter((code) => !new RegExp(`['"\`]${code}['"\`]`).test(text));
  expect(unreached.sort()).toEqual(Object.keys(NOT_YET).sort());
});
