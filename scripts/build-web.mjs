#!/usr/bin/env node
// Builds the browser board (web/) into dist/web with Vite, when the build is missing or was made
// from other sources (a hash of web/, the typed client it compiles in, and package-lock.json, kept
// beside it); --force always builds.
// Then checks the bundle budget: what the board page loads, gzipped, must stay under BUDGET_BYTES.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WEB = join(ROOT, 'web');
const OUT = join(ROOT, 'dist', 'web');
const STAMP = join(OUT, '.source-hash');
/** The board page's scripts and styles, gzipped (docs/people.md#the-browser-board). */
export const BUDGET_BYTES = 100 * 1024;

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
  );
}

export function sourceHash() {
  const hash = createHash('sha256');
  for (const file of [...files(WEB), ...files(join(ROOT, 'client', 'src')), join(ROOT, 'package-lock.json')].sort()) {
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** Gzipped bytes of what the page loads first: every asset index.html names (entry, preloads, styles); lazy chunks are not counted. */
export function pageWeight() {
  const html = readFileSync(join(OUT, 'index.html'), 'utf8');
  const named = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)].map((m) => m[1]);
  return named.reduce((sum, name) => sum + gzipSync(readFileSync(join(OUT, 'assets', name)), { level: 9 }).length, 0);
}

export async function buildWeb({ force = false, quiet = false } = {}) {
  const hash = sourceHash();
  if (!force && existsSync(join(OUT, 'index.html')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash)
    return { built: false };
  const { build } = await import('vite');
  await build({ configFile: join(WEB, 'vite.config.ts'), logLevel: quiet ? 'warn' : 'info' });
  const weight = pageWeight();
  if (weight > BUDGET_BYTES)
    throw new Error(
      `the board page weighs ${(weight / 1024).toFixed(1)} KB gzipped, over its ${BUDGET_BYTES / 1024} KB budget`,
    );
  writeFileSync(STAMP, hash);
  if (!quiet) console.log(`browser board built: ${(weight / 1024).toFixed(1)} KB gzipped of ${BUDGET_BYTES / 1024} KB`);
  return { built: true, weight };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildWeb({ force: process.argv.includes('--force') }).catch((e) => {
    process.stderr.write(`build-web: ${e.message}\n`);
    process.exit(1);
  });
}
