// The node's TypeScript as the suites' child processes run it. Through tsx each start costs about
// 3.5 s of CPU, half of it compiling, and some suites start a node a hundred times (the data-dir
// lock's rounds, the crash and restart suites, the CLI): so a whole run compiles the sources once
// (esbuild, the compiler tsx itself runs on, file by file as `npm run build` lays them out in
// dist/) and its children run that. A watch run compiles nothing: its children run the sources
// through tsx, so that an edit counts at once.
import { copyFile, mkdir, readdir, rm, stat, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type * as Esbuild from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What the children import: the node, its client package, and the one test entry run as a process. */
const SOURCES = ['src', 'machines', 'actors', 'store', 'client/src', 'test/support/board-commit-child.ts'];

/**
 * Compiles the sources into a directory of this run's own (under node_modules/.cache, so that
 * their imports of packages resolve) and returns it with its removal. Laid out as dist/ is, with
 * dist/web and package.json beside, where the built node looks for them.
 */
export async function buildForChildren(): Promise<{ dir: string; remove(): Promise<unknown> }> {
  const parent = join(ROOT, 'node_modules', '.cache', 'agent-board-test-build');
  await sweep(parent);
  const dir = join(parent, randomUUID());
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await compile(dir);
  } catch (e) {
    await remove();
    throw e;
  }
  return { dir, remove };
}

async function compile(dir: string): Promise<void> {
  const require = createRequire(import.meta.url);
  const esbuild = createRequire(require.resolve('tsx'))('esbuild') as typeof Esbuild;
  const entries: string[] = [];
  for (const source of SOURCES)
    if (source.endsWith('.ts')) entries.push(source);
    else
      for (const f of await readdir(join(ROOT, source), { recursive: true }))
        if (f.endsWith('.ts') && !f.endsWith('.d.ts')) entries.push(join(source, f));
  await esbuild.build({
    entryPoints: entries.map((f) => join(ROOT, f)),
    outbase: ROOT,
    outdir: join(dir, 'dist'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  await mkdir(join(dir, 'dist'), { recursive: true });
  await symlink(join(ROOT, 'dist', 'web'), join(dir, 'dist', 'web'));
  await copyFile(join(ROOT, 'package.json'), join(dir, 'package.json'));
}

/** Removes what runs that never ended (killed, say) left over a day ago. */
async function sweep(parent: string): Promise<void> {
  const dayAgo = Date.now() - 86_400_000;
  for (const entry of await readdir(parent).catch(() => []))
    if (((await stat(join(parent, entry)).catch(() => null))?.mtimeMs ?? Infinity) < dayAgo)
      await rm(join(parent, entry), { recursive: true, force: true });
}

/** The node arguments that run the agent-board command: compiled when the run compiled the sources, else the bin (which runs the sources through tsx). */
export function cliArgs(): string[] {
  return inject('builtDir') ? entryArgs('src/cli/main.ts') : [join(ROOT, 'bin', 'agent-board.js')];
}

/**
 * The node arguments that run `entry` (a .ts file, from the repository's root) as a process: its
 * compiled form when the run compiled the sources, else the source through tsx.
 */
export function entryArgs(entry: string): string[] {
  const built = inject('builtDir');
  if (!built) return ['--import', 'tsx', join(ROOT, entry)];
  return [join(built, 'dist', entry.replace(/\.ts$/, '.js'))];
}
