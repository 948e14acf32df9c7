#!/usr/bin/env node
// npm run pack [-- OUT_DIR]: the agents' two packages as tarballs an agent developer installs
// (default OUT_DIR: dist/packs), each compiled, with only what it needs:
//   @agent-board/client  client/src compiled by tsc, with declarations; runs in Node 20+ and in a
//                        browser bundle. Its manifest is client/package.json, pointed at dist/.
//   agent-board          the CLI and the MCP server (src/cli, src/mcp, the client and the packages
//                        they import) bundled by esbuild: its bin, and the MCP server as a chunk
//                        loaded only by `agent-board mcp`. Its manifest is packages/agent-board/
//                        package.json; the licences of what the bundle took in go beside it.
// Both take the repository's version. Prints one line per tarball: its path.
import { spawnSync } from 'node:child_process';
import { copyFile, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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

/**
 * agent-board: the CLI bundled with what it imports, so that a start reads a few files rather than
 * resolving hundreds. The MCP server (and with it the MCP SDK and zod) is a chunk of its own, which
 * only `agent-board mcp` loads. `ws` stays a dependency: the client opens it by a name esbuild cannot
 * see (so that browser bundles leave it out), and its native helpers are optional installs.
 */
async function packAgentBoard(dir) {
  const external = ['ws'];
  const built = await esbuild.build({
    entryPoints: { 'agent-board': join(ROOT, 'src', 'cli', 'main.ts') },
    outdir: join(dir, 'dist'),
    bundle: true,
    splitting: true,
    external,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Bundled CommonJS (ajv, under the MCP SDK) calls require() for Node's own modules.
    banner: {
      js: "import { createRequire as createRequire_ } from 'node:module'; const require = createRequire_(import.meta.url);",
    },
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  await addShebang(join(dir, 'dist', 'agent-board.js'));
  const versions = { ...root.dependencies, ...client.dependencies };
  const dependencies = Object.fromEntries(
    external.map((name) => {
      if (!versions[name]) throw new Error(`the CLI imports ${name}, which package.json does not depend on`);
      return [name, versions[name]];
    }),
  );
  await writeFile(join(dir, 'THIRD_PARTY_LICENSES.md'), await licensesOf(bundledPackages(built.metafile)));
  const manifest = await readJson(join(ROOT, 'packages', 'agent-board', 'package.json'));
  await writeJson(join(dir, 'package.json'), { name: manifest.name, version: root.version, ...manifest, dependencies });
  await copyFile(join(ROOT, 'packages', 'agent-board', 'README.md'), join(dir, 'README.md'));
  return pack(dir);
}

async function addShebang(file) {
  await writeFile(file, `#!/usr/bin/env node\n${await readFile(file, 'utf8')}`);
}

/** The folders of the packages whose code the bundle took in (node_modules/<name>, nested ones too). */
function bundledPackages(metafile) {
  const folders = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) folders.add(match[1]);
  }
  return [...folders].sort();
}

/** Each bundled package's name, version, licence and licence text, as its authors ship them. */
async function licensesOf(folders) {
  const sections = [];
  for (const folder of folders) {
    const { name, version, license } = await readJson(join(ROOT, folder, 'package.json'));
    const files = await readdir(join(ROOT, folder));
    const file = files.find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
    const text = file
      ? (await readFile(join(ROOT, folder, file), 'utf8')).trim()
      : `(no licence file; package.json says ${license})`;
    sections.push(`## ${name} ${version} (${license})\n\n\`\`\`\n${text}\n\`\`\`\n`);
  }
  return `# Third-party code bundled into agent-board\n\n${sections.join('\n')}`;
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
