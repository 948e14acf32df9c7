// The image builds and runs, checked without a container engine (none here can pull a base
// image): the Dockerfile's steps are replayed in a clean temporary directory, one folder per stage
// standing for its file system, on exactly the files its COPY steps take from the build context
// (the tree less .dockerignore). `npm run build` runs for real; `npm ci` is stood in for by the
// installed node_modules, hard-linked, once it is checked to match package-lock.json exactly, then
// cut to what npm ci installs from the files the stage copied: the lockfile's packages the root
// package and each workspace whose package.json is there need (without devDependencies for
// --omit=dev); system steps (the /data owner) are skipped and named. Then the last stage's CMD
// starts with the image's ENV, serves the board page and its assets, and passes the HEALTHCHECK. A
// step the replay does not know fails the test rather than pass unchecked. The `deps` stage is also
// replayed with npm ci itself (from npm's cache), and every package the compiled server and CLI
// import must be in it. docs/operating.md "Deploying" says what this leaves out.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { envPairs, execForm, parseDockerfile, readContext, type Stage } from '../support/dockerfile.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'image-replay-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  link?: boolean;
  resolved?: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/**
 * The lockfile paths npm ci installs in `cwd`: the root package and each workspace whose
 * package.json the stage has copied (npm leaves a workspace out, with what only it needs, when its
 * folder is not there), and what they need, followed through the lockfile as Node resolves it
 * (nearest node_modules first). devDependencies count only for the root and the workspaces, and not
 * with --omit=dev; optional dependencies and optional peers count where the lockfile has them.
 */
function npmCiInstalls(cwd: string, packages: Record<string, LockEntry>, omitDev: boolean): Set<string> {
  const installed = new Set<string>();
  const parent = (path: string) => path.slice(0, Math.max(path.lastIndexOf('/node_modules/'), 0));
  const resolve = (from: string, name: string): string | null => {
    for (let dir = from; ; dir = parent(dir)) {
      const path = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      if (packages[path]) return path;
      if (!dir) return null;
    }
  };
  const visit = (path: string, withDev: boolean): void => {
    if (installed.has(path)) return;
    installed.add(path);
    const entry = packages[path]!;
    if (entry.link) return visit(entry.resolved!, withDev);
    const optionalPeer = (name: string) => entry.peerDependenciesMeta?.[name]?.optional === true;
    const needs: [string, boolean][] = [
      ...Object.keys(entry.dependencies ?? {}).map((n): [string, boolean] => [n, true]),
      ...Object.keys(entry.optionalDependencies ?? {}).map((n): [string, boolean] => [n, false]),
      ...Object.keys(entry.peerDependencies ?? {}).map((n): [string, boolean] => [n, !optionalPeer(n)]),
      ...(withDev ? Object.keys(entry.devDependencies ?? {}).map((n): [string, boolean] => [n, true]) : []),
    ];
    for (const [name, required] of needs) {
      const found = resolve(path, name);
      if (found) visit(found, false);
      else if (required) throw new Error(`npm ci: ${path || 'the root'} needs ${name}, not in package-lock.json`);
    }
  };
  visit('', !omitDev);
  for (const workspace of packages['']!.workspaces ?? []) {
    if (!existsSync(join(cwd, workspace, 'package.json'))) continue;
    visit(workspace, !omitDev);
    for (const [path, entry] of Object.entries(packages))
      if (entry.link && entry.resolved === workspace) installed.add(path);
  }
  return installed;
}

/** `npm ci` in `cwd` (a stage folder), from the installed tree once it matches the lockfile copied there. */
function installLikeNpmCi(cwd: string, omitDev: boolean): void {
  const lockFile = join(cwd, 'package-lock.json');
  if (!existsSync(lockFile) || !existsSync(join(cwd, 'package.json')))
    throw new Error('npm ci: package.json and package-lock.json must be copied before it (it would fail in the image)');
  const packages = (JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, LockEntry> }).packages;
  const mismatched: string[] = [];
  for (const [path, entry] of Object.entries(packages)) {
    if (!path || entry.link) continue;
    const manifest = join(ROOT, path, 'package.json');
    if (!existsSync(manifest)) {
      if (!entry.optional && !entry.devOptional) mismatched.push(`${path} missing`); // optional ones for other platforms are skipped by npm too
      continue;
    }
    const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    if (version !== entry.version) mismatched.push(`${path} ${version} ≠ ${entry.version}`);
  }
  if (mismatched.length)
    throw new Error(`node_modules does not match package-lock.json (run npm ci): ${mismatched.slice(0, 5).join('; ')}`);
  // The real folder, not a symlink to it (a worktree sharing the checkout's node_modules): the
  // pruning below deletes from the copy, and through a copied symlink it would delete the original.
  // Tools' caches (.cache, written meanwhile by other runs' builds) are not npm ci's and are left out.
  const installedDir = realpathSync(join(ROOT, 'node_modules'));
  const entries = readdirSync(installedDir).filter((name) => name !== '.cache');
  mkdirSync(join(cwd, 'node_modules'));
  const copy = spawnSync('cp', ['-al', ...entries.map((name) => join(installedDir, name)), join(cwd, 'node_modules')]);
  if (copy.status !== 0) throw new Error(`cp -al node_modules: ${copy.stderr.toString()}`);
  // Packages installed by hand, not in the lockfile, would hide a missing dependency: npm ci has none.
  for (const name of readdirSync(join(cwd, 'node_modules'))) {
    const names = name.startsWith('@')
      ? readdirSync(join(cwd, 'node_modules', name)).map((n) => `${name}/${n}`)
      : name.startsWith('.')
        ? []
        : [name];
    for (const n of names)
      if (!packages[`node_modules/${n}`]) rmSync(join(cwd, 'node_modules', n), { recursive: true, force: true });
  }
  // What npm ci would not install from the files this stage has: dev packages for --omit=dev, and
  // what only a workspace needs whose package.json was not copied.
  const installed = npmCiInstalls(cwd, packages, omitDev);
  for (const path of Object.keys(packages)) {
    if (path && path.startsWith('node_modules/') && !installed.has(path))
      rmSync(join(cwd, path), { recursive: true, force: true });
  }
}

/** What the replay does with each RUN: run it, stand in for it, or skip it saying why. */
type Runs = Record<string, { run: true } | { standIn: (cwd: string) => void } | { skip: string }>;
const RUNS: Runs = {
  'npm ci --no-audit --no-fund': { standIn: (cwd) => installLikeNpmCi(cwd, false) },
  'npm ci --omit=dev --no-audit --no-fund': { standIn: (cwd) => installLikeNpmCi(cwd, true) },
  'npm run build': { run: true },
  'mkdir -p /data && chown node:node /data': {
    skip: 'the volume folder and its owner: the replay runs as this user, with DATA_DIR in its temporary directory',
  },
};
const RECORDED = new Set(['USER', 'VOLUME', 'EXPOSE', 'HEALTHCHECK', 'STOPSIGNAL', 'CMD', 'LABEL']);

interface Built {
  root: string;
  workdir: string;
  env: Record<string, string>;
  cmd: string[];
  healthcheck: string | null;
  skipped: string[];
}

function replay(stages: Stage[], context: string[], runs: Runs = RUNS): Built {
  const roots = stages.map((s, i) => join(work, `stage-${i}-${s.name ?? 'final'}`));
  const skipped: string[] = [];
  let built: Built | null = null;
  stages.forEach((stage, i) => {
    const root = roots[i]!;
    const host = (path: string) => join(root, path);
    mkdirSync(root, { recursive: true });
    let cwd = '/';
    const env: Record<string, string> = {};
    let cmd: string[] = [];
    let healthcheck: string | null = null;
    for (const step of stage.steps) {
      if (step.op === 'WORKDIR') mkdirSync(host((cwd = posix.resolve(cwd, step.args))), { recursive: true });
      else if (step.op === 'ENV') Object.assign(env, envPairs(step.args));
      else if (step.op === 'COPY') {
        const parts = step.args.split(/\s+/);
        const dest = posix.resolve(cwd, parts.at(-1)!);
        const intoFolder = parts.at(-1)!.endsWith('/') || parts.length > 2;
        for (const src of parts.slice(0, -1)) {
          if (step.flags.from !== undefined) {
            const from = stages.findIndex((s) => s.name === step.flags.from);
            if (from < 0 || from >= i) throw new Error(`COPY --from=${step.flags.from}: no such earlier stage`);
            const source = join(roots[from]!, posix.resolve('/', src));
            mkdirSync(dirname(host(dest)), { recursive: true });
            if (spawnSync('cp', ['-al', source, host(dest)]).status !== 0)
              throw new Error(`COPY --from=${step.flags.from} ${src}: not in that stage`);
            continue;
          }
          const prefix = src === '.' ? '' : src.replace(/\/$/, '');
          const taken = context.filter((f) => !prefix || f === prefix || f.startsWith(`${prefix}/`));
          if (!taken.length)
            throw new Error(
              `COPY ${src}: not in the build context (left out by .dockerignore?); the image build would fail`,
            );
          for (const file of taken) {
            const target =
              file === prefix
                ? intoFolder
                  ? posix.join(dest, basename(file))
                  : dest
                : posix.join(dest, prefix ? file.slice(prefix.length + 1) : file);
            mkdirSync(dirname(host(target)), { recursive: true });
            cpSync(join(ROOT, file), host(target));
          }
        }
      } else if (step.op === 'RUN') {
        const how = runs[step.args];
        if (!how)
          throw new Error(
            `RUN ${step.args}: the image replay does not know this step; teach test/deploy/image.test.ts what it does`,
          );
        if ('skip' in how) skipped.push(`${step.args}: ${how.skip}`);
        else if ('standIn' in how) how.standIn(host(cwd));
        else {
          const run = spawnSync('sh', ['-c', step.args], {
            cwd: host(cwd),
            env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
            encoding: 'utf8',
            timeout: 240_000,
          });
          if (run.status !== 0)
            throw new Error(`RUN ${step.args} failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
        }
      } else if (step.op === 'CMD') cmd = execForm(step.args);
      else if (step.op === 'HEALTHCHECK') healthcheck = step.args.replace(/^CMD\s+/, '');
      else if (!RECORDED.has(step.op)) throw new Error(`${step.op}: the image replay does not know this instruction`);
    }
    built = { root, workdir: cwd, env, cmd, healthcheck, skipped };
  });
  return built!;
}

describe('the container image (Dockerfile replayed)', () => {
  it('builds from exactly the files it copies, starts with its CMD and ENV, serves the board page and passes its HEALTHCHECK', async () => {
    const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
    const context = readContext(ROOT);
    expect(context).toContain('web/index.html');
    expect(context.some((f) => f.startsWith('node_modules/') || f.startsWith('.git/') || f.startsWith('dist/'))).toBe(
      false,
    );
    const image = replay(stages, context);
    expect(image.skipped).toHaveLength(1);
    expect(image.env).toMatchObject({ NODE_ENV: 'production', DATA_DIR: '/data' });

    const dataDir = join(image.root, image.env.DATA_DIR!);
    mkdirSync(dataDir, { recursive: true });
    const env = { PATH: process.env.PATH ?? '', ...image.env, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
    const child = spawn(image.cmd[0]!, image.cmd.slice(1), {
      cwd: join(image.root, image.workdir),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.on('data', () => {
          const m = /"port":(\d+).*"msg":"listening"/.exec(out);
          if (m) resolve(Number(m[1]));
        });
        void exited.then(() => reject(new Error(`the image's CMD exited:\n${out}`)));
      });
      const base = `http://127.0.0.1:${port}`;
      const page = await fetch(`${base}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await page.text();
      const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
      expect(assets.length).toBeGreaterThan(0);
      for (const asset of assets) expect((await fetch(`${base}${asset}`)).status, asset).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      const health = spawnSync('sh', ['-c', image.healthcheck!], {
        env: { ...env, PORT: String(port) },
        timeout: 10_000,
      });
      expect(health.status).toBe(0);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 300_000);

  it('installs, in its deps stage run by npm ci itself, every package the compiled server and CLI import', () => {
    const deps = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).find((s) => s.name === 'deps');
    const npmCi = deps?.steps.find((s) => s.op === 'RUN' && s.args.startsWith('npm ci'))?.args;
    expect(npmCi).toContain('--omit=dev');
    // npm ci for real, from npm's cache; install scripts (native builds) are not what is checked.
    const real = (cwd: string) => {
      const ci = spawnSync('sh', ['-c', `${npmCi} --prefer-offline --ignore-scripts`], { cwd, encoding: 'utf8' });
      if (ci.status !== 0) throw new Error(`${npmCi}:\n${ci.stdout}\n${ci.stderr}`);
    };
    const stage = replay([deps!], readContext(ROOT), { ...RUNS, [npmCi!]: { standIn: real } });
    const modules = join(stage.root, stage.workdir, 'node_modules');
    const missing = runtimeImports().filter((name) => !existsSync(join(modules, name, 'package.json')));
    expect(missing).toEqual([]);
  }, 300_000);
});

/** The packages the compiled sources (tsconfig.build.json's, and the client they import) load at run time. */
function runtimeImports(): string[] {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const text = readFileSync(path, 'utf8').replace(/^\s*(?:import|export)\s+type\b[^;]*;/gm, '');
        // import … from 'x', import 'x', import('x'), createRequire(…)('x')
        for (const m of text.matchAll(/(?:\bfrom\s+|^\s*import\s+|\bimport\(\s*|\)\(\s*)['"]([^'"\s]+)['"]/gm)) {
          const spec = m[1]!;
          if (spec.startsWith('.') || spec.startsWith('node:')) continue;
          names.add(
            spec
              .split('/')
              .slice(0, spec.startsWith('@') ? 2 : 1)
              .join('/'),
          );
        }
      }
    }
  };
  for (const dir of ['src', 'machines', 'actors', 'store', 'client/src']) walk(join(ROOT, dir));
  return [...names].sort();
}
