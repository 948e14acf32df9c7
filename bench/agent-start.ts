// npm run bench, agents' tools: how long an agent waits for them to start (issue 45's targets).
//   npx tsx bench/agent-start.ts [runs]     (default 10 runs of each, interleaved)
// Two ways of starting the same commands, against one running node (embedded store, shipped defaults):
//  - packed:   the agent-board tarball (npm run pack) installed into an empty folder outside the
//              repository, its bin run by plain node: what an agent developer runs;
//  - checkout: bin/agent-board.js in this checkout, which runs the TypeScript through tsx (today's way).
// Timed, wall clock from spawn, per run:
//  - `agent-board mcp`: until the `initialize` answer arrives on stdout (the request is written at
//    spawn, as an MCP client does); target ≤ 500 ms;
//  - `agent-board status --json`: until the process exits, its board read included; target ≤ 300 ms.
// Prints min / median / max of each.
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownerAndAgent, startNode } from './node.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const runs = Number(process.argv[2] ?? 10);
const TARGETS = { mcp: 500, status: 300 } as const;

/** Packs the tarballs and installs them into a new folder under the system's temp dir; its bin. */
async function installPacked(): Promise<{ bin: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-start-'));
  const packs = join(dir, 'packs');
  const made = spawnSync(process.execPath, [join(ROOT, 'scripts', 'pack-agents.mjs'), packs], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`pack failed: ${made.stderr}`);
  const app = join(dir, 'app');
  await mkdir(app);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'an-agent', private: true }));
  const installed = spawnSync(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', ...made.stdout.trim().split('\n')],
    { cwd: app, encoding: 'utf8' },
  );
  if (installed.status !== 0) throw new Error(`npm install failed: ${installed.stderr}`);
  return {
    bin: join(app, 'node_modules', 'agent-board', 'dist', 'agent-board.js'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** ms from spawn to the first stdout line answering JSON-RPC id 1, then the process is ended. */
function timeMcp(bin: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, 'mcp'], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.split('\n').some((line) => line.includes('"id":1'))) {
        const ms = performance.now() - started;
        child.kill('SIGTERM');
        resolve(ms);
      }
    });
    child.once('exit', (code) => reject(new Error(`mcp exited ${code} before its initialize answer: ${out}`)));
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
      })}\n`,
    );
  });
}

/** ms from spawn to exit of a node that runs nothing: the floor under both commands on this machine. */
function timeBareNode(): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    spawn(process.execPath, ['-e', '0'])
      .once('exit', () => resolve(performance.now() - started))
      .once('error', reject);
  });
}

/** ms from spawn to exit of `status --json`, which must succeed. */
function timeStatus(bin: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, 'status', '--json'], { env: { ...process.env, ...env } });
    let err = '';
    child.stderr.on('data', (c: Buffer) => void (err += c.toString()));
    child.stdout.resume();
    child.once('exit', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`status exited ${code}: ${err}`)),
    );
  });
}

const spread = (values: number[]): string => {
  const s = [...values].sort((a, b) => a - b);
  const f = (v: number) => `${v.toFixed(0)} ms`;
  return `${f(s[0]!)} / ${f(s[Math.floor(s.length / 2)]!)} / ${f(s.at(-1)!)}`;
};

const node = await startNode({}, [], 'ignore');
const packed = await installPacked();
try {
  const { agent } = await ownerAndAgent(node.url);
  const config = await mkdtemp(join(tmpdir(), 'agent-start-config-'));
  const env = {
    BOARD_URL: node.url,
    BOARD_TOKEN: agent.authorization!.slice('Bearer '.length),
    XDG_CONFIG_HOME: config,
  };
  const ways = { packed: packed.bin, checkout: join(ROOT, 'bin', 'agent-board.js') };
  const figures: Record<string, { mcp: number[]; status: number[] }> = {
    packed: { mcp: [], status: [] },
    checkout: { mcp: [], status: [] },
  };
  const bare: number[] = [];
  for (let i = 0; i < runs; i++) {
    bare.push(await timeBareNode());
    for (const [way, bin] of i % 2 ? Object.entries(ways).reverse() : Object.entries(ways)) {
      figures[way]!.mcp.push(await timeMcp(bin, env));
      figures[way]!.status.push(await timeStatus(bin, env));
    }
  }
  console.log(`agents' tools, ${runs} runs each, min / median / max of wall time from spawn (node ${process.version})`);
  for (const [way, f] of Object.entries(figures)) {
    const mark = (values: number[], target: number) =>
      way === 'packed'
        ? `   target ≤ ${target} ms: ${[...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]! <= target ? 'met' : 'MISSED'} (median)`
        : '';
    console.log(`  ${way.padEnd(9)} mcp to initialize answer  ${spread(f.mcp)}${mark(f.mcp, TARGETS.mcp)}`);
    console.log(`  ${way.padEnd(9)} status --json            ${spread(f.status)}${mark(f.status, TARGETS.status)}`);
  }
  console.log(`  node -e 0 (the floor)                ${spread(bare)}`);
  await rm(config, { recursive: true, force: true });
} finally {
  await packed.remove();
  await node.stop();
}
