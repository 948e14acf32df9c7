#!/usr/bin/env node
// npm run pack [-- OUT_DIR]: the agents' two packages as tarballs an agent developer installs
// (default OUT_DIR: dist/packs), each compiled, with only what it needs:
//   @agent-board/client  client/src compiled by tsc, with declarations; runs in Node 20+ and in a
//                        browser bundle. Its manifest is client/package.json, pointed at dist/.
//   agent-board          the CLI and the MCP server (src/cli, src/mcp, and the client they import)
//                        bundled by esbuild into one file, its bin. Its manifest is
//                        packages/agent-board/package.json; its dependencies are the packages the
//                        bundle imports, at the versions this checkout installs.
// Both take the repository's version. Prints one line per tarball: its path.
import { spawnSync } from 'node:child_process';
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const require = createRequire(import.meta.url);

const out = resolve(process.argv[2] ?? join(ROOT, 'dist', 'packs'));
const stage = join(out, 'stage');
const readJson = async (path) => JSON.parse(await readFile(path, 'utf8'));
const writeJson = (path, value) => writeFile(path, `${JSON.stringify(value, null, 2)}\n`);

const root = await readJson(join(ROOT, 'package.json'));
const client = await readJson(join(ROOT, 'client', 'package.json'));

await rm(stage, { recursive: true, force: true });
const tarballs = [await packClient(join(stage, 'client')), await packAgentBoard(join(stage, 'agent-board'))];
await rm(stage, { recursive: true, force: true });
for (const tarball of tarballs) console.log(tarball);

/** @agent-board/client: tsc's JavaScript and declarations; in the repository its exports stay the source. */
async function packClient(dir) {
  run(process.execPath, [
    require.resolve('typescript/bin/tsc'),
    '-p',
    'client/tsconfig.build.json',
    '--outDir',
    join(dir, 'dist'),
  ]);
  await copyFile(join(ROOT, 'client', 'README.md'), join(dir, 'README.md'));
  const { private: _private, exports: _source, ...manifest } = client;
  await writeJson(join(dir, 'package.json'), {
    name: manifest.name,
    version: root.version,
    ...manifest,
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    types: './dist/index.d.ts',
    files: ['dist'],
  });
  return pack(dir);
}

/** agent-board: one bundled file, which imports only the packages listed as its dependencies. */
async function packAgentBoard(dir) {
  const built = await esbuild.build({
    entryPoints: [join(ROOT, 'src', 'cli', 'main.ts')],
    outfile: join(dir, 'dist', 'agent-board.js'),
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    metafile: true,
    logLevel: 'warning',
  });
  const imported = new Set(
    Object.values(built.metafile.inputs)
      .flatMap((input) => input.imports)
      .filter((i) => i.external && !i.path.startsWith('node:'))
      .map((i) => packageName(i.path)),
  );
  // The client opens `ws` by a name esbuild cannot see (so browser bundles leave it out): its own
  // dependencies come along whole.
  for (const name of Object.keys(client.dependencies)) imported.add(name);
  const versions = { ...root.dependencies, ...client.dependencies };
  const dependencies = Object.fromEntries(
    [...imported].sort().map((name) => {
      if (!versions[name]) throw new Error(`the CLI imports ${name}, which package.json does not depend on`);
      return [name, versions[name]];
    }),
  );
  const manifest = await readJson(join(ROOT, 'packages', 'agent-board', 'package.json'));
  await writeJson(join(dir, 'package.json'), { name: manifest.name, version: root.version, ...manifest, dependencies });
  await copyFile(join(ROOT, 'packages', 'agent-board', 'README.md'), join(dir, 'README.md'));
  return pack(dir);
}

function packageName(specifier) {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

function pack(dir) {
  const [{ filename }] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', out], dir));
  return join(out, filename);
}

function run(command, args, cwd = ROOT) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}${result.stderr}`);
  return result.stdout;
}
