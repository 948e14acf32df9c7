// The agents' two packages as an agent developer gets them: `npm run pack` makes the tarballs,
// npm installs them into an empty folder outside the repository, and there, with plain `node` and
// nothing of this checkout: a `.mjs` script imports the client and completes claim → submit (and
// exits by itself, its socket closed), `agent-board --help` runs, and the SDK's own MCP client
// completes the stdio handshake and a tool call; the client also runs in Chromium from a browser bundle.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { head, newBoard } from '../support/board.js';
import { launchChromium, openPage, startBrowserServer } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tempDir, type TempDir } from '../support/temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const chromium = inject('chromium');

let srv: TestServer;
let packs: TempDir;
let folder: TempDir;
let tarballs: string[];

beforeAll(async () => {
  [srv, packs, folder] = await Promise.all([startTestServer(), tempDir(), tempDir()]);
  tarballs = (await run(process.execPath, [join(ROOT, 'scripts', 'pack-agents.mjs'), packs.path], ROOT)).stdout
    .trim()
    .split('\n');
  await writeFile(join(folder.path, 'package.json'), JSON.stringify({ name: 'an-agent', private: true }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], folder.path);
}, 240_000);

afterAll(async () => {
  await Promise.all([srv?.stop(), packs?.remove(), folder?.remove()]);
});

/** Runs a command to its end; throws with its output when it fails or outlives `ms`. */
function run(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  ms = 180_000,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, timeout: ms });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => void (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) =>
      code === 0
        ? resolve({ stdout, stderr })
        : reject(new Error(`${command} ${args.join(' ')} ended ${code ?? signal}:\n${stdout}\n${stderr}`)),
    );
  });
}

const tokenOf = (agent: { defaults: Record<string, string> }): string =>
  agent.defaults.authorization!.slice('Bearer '.length);

describe('the packed tarballs', () => {
  it('hold compiled JavaScript (and the client its declarations), no TypeScript source', () => {
    expect(tarballs.map((t) => t.split('/').at(-1))).toEqual([
      expect.stringMatching(/^agent-board-client-.+\.tgz$/),
      expect.stringMatching(/^agent-board-.+\.tgz$/),
    ]);
    const [client, cli] = tarballs.map((t) =>
      spawnSync('tar', ['tzf', t], { encoding: 'utf8' }).stdout.trim().split('\n').sort(),
    );
    expect(client).toEqual(expect.arrayContaining(['package/dist/index.js', 'package/dist/index.d.ts']));
    expect(cli).toContain('package/dist/agent-board.js');
    expect(cli!.filter((f) => !/^package\/dist\/[\w-]+\.js$/.test(f))).toEqual([
      'package/README.md',
      'package/THIRD_PARTY_LICENSES.md',
      'package/package.json',
    ]);
    for (const f of [...client!, ...cli!]) expect(f).not.toMatch(/(?<!\.d)\.ts$/);
  });

  it('install outside the repository without tsx or anything of this checkout', () => {
    expect(relative(ROOT, folder.path)).toMatch(/^\.\./);
    const modules = join(folder.path, 'node_modules');
    expect(existsSync(join(modules, '@agent-board', 'client', 'dist', 'index.js'))).toBe(true);
    expect(existsSync(join(modules, '.bin', 'agent-board'))).toBe(true);
    expect(existsSync(join(modules, 'tsx'))).toBe(false);
    expect(existsSync(join(modules, 'typescript'))).toBe(false);
  });
});

describe('installed, with plain node', () => {
  it('a .mjs script imports the client, completes claim → submit, and exits by itself', async () => {
    const board = await newBoard(srv.url);
    await board.owner.post('/api/items', { title: 'packaged work', verify: 'required' });
    const token = tokenOf(await board.agent('packaged'));
    await writeFile(
      join(folder.path, 'agent.mjs'),
      `import { BoardClient, BoardSocket, LeaseKeeper } from '@agent-board/client';
const baseUrl = process.env.BOARD_URL;
const token = process.env.BOARD_TOKEN;
const board = new BoardClient({ baseUrl, token });
const socket = new BoardSocket({ baseUrl, token });
await socket.connect();
try {
  const { workspace } = await board.get('/api/whoami');
  const lease = await board.post('/api/claim', { body: {} });
  const keeper = new LeaseKeeper({ client: board, lease, socket, boardId: workspace.projectId });
  const submitted = await keeper.submit(process.env.HEAD);
  console.log(JSON.stringify({ client: import.meta.resolve('@agent-board/client'), claimed: lease.workId, submitted }));
} finally {
  socket.close();
}
`,
    );
    const { stdout } = await run(
      process.execPath,
      ['agent.mjs'],
      folder.path,
      { BOARD_URL: srv.url, BOARD_TOKEN: token, HEAD: head(7) },
      30_000, // a socket left open would keep it alive past this
    );
    const answer = JSON.parse(stdout) as { client: string; claimed: string; submitted: unknown };
    expect(fileURLToPath(answer.client)).toBe(join(folder.path, 'node_modules/@agent-board/client/dist/index.js'));
    expect(answer.claimed).toBe('W-1');
    expect(answer.submitted).toEqual({ workId: 'W-1', state: 'awaiting_verify' });
    const item = await board.owner.get('/api/items/W-1');
    expect(item.body).toMatchObject({ state: 'awaiting_verify', submission: { head: head(7) } });
  });

  it('agent-board --help and --version run from the installed bin', async () => {
    const bin = join(folder.path, 'node_modules', '.bin', 'agent-board');
    const help = await run(bin, ['--help'], folder.path);
    expect(help.stdout).toMatch(/^Usage: agent-board/);
    for (const command of ['login', 'claim', 'submit', 'verify', 'status', 'watch', 'mcp'])
      expect(help.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    const version = await run(bin, ['--version'], folder.path);
    expect(version.stdout.trim()).toBe(
      JSON.parse(spawnSync('npm', ['pkg', 'get', 'version'], { cwd: ROOT, encoding: 'utf8' }).stdout),
    );
  });

  it('agent-board mcp completes the MCP stdio handshake and a tool call with the SDK client', async () => {
    const board = await newBoard(srv.url);
    await board.owner.post('/api/items', { title: 'seen over MCP' });
    const token = tokenOf(await board.agent('packaged-mcp'));
    const config = await tempDir();
    const client = new McpClient({ name: 'packaged-test', version: '1.0.0' });
    try {
      await client.connect(
        new StdioClientTransport({
          command: join(folder.path, 'node_modules', '.bin', 'agent-board'),
          args: ['mcp'],
          cwd: folder.path,
          env: { PATH: process.env.PATH!, BOARD_URL: srv.url, BOARD_TOKEN: token, XDG_CONFIG_HOME: config.path },
        }),
      );
      expect(client.getServerVersion()).toMatchObject({ name: 'agent-board' });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['board_status', 'claim_work', 'submit_work']));
      const status = (await client.callTool({ name: 'board_status', arguments: {} })) as CallToolResult;
      expect(status.isError).toBeFalsy();
      expect(JSON.stringify(status.structuredContent)).toContain('seen over MCP');
    } finally {
      await client.close();
      await config.remove();
    }
  });
});

describe.skipIf(!chromium)('installed, in a browser bundle (Chromium)', () => {
  let browser: Browser;
  let server: TestServer;
  beforeAll(async () => {
    [browser, server] = await Promise.all([launchChromium(chromium!), startBrowserServer()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('bundles for the browser without Node modules and answers the board’s typed refusal', async () => {
    const esbuild = await import('esbuild');
    const entry = join(folder.path, 'page.mjs');
    await writeFile(entry, `export { BoardApiError, BoardClient } from '@agent-board/client';\n`);
    const bundle = await esbuild.build({
      entryPoints: [entry],
      absWorkingDir: folder.path,
      bundle: true,
      platform: 'browser',
      format: 'iife',
      globalName: 'agentBoard',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(bundle.metafile.inputs);
    expect(inputs).toContain('node_modules/@agent-board/client/dist/index.js');
    expect(inputs.filter((i) => /node_modules\/ws\/|^node:/.test(i))).toEqual([]);

    const tab = await openPage(browser, server);
    try {
      await tab.page.goto('/');
      // (evaluate, not a script tag: the page's own CSP admits only its own scripts.)
      const answer = await tab.page.evaluate(`(async () => {
        ${bundle.outputFiles[0]!.text}
        const board = new agentBoard.BoardClient({ baseUrl: location.origin });
        const error = await board.get('/api/whoami').catch((e) => e);
        return { typed: error instanceof agentBoard.BoardApiError, code: error.code, status: error.status };
      })()`);
      expect(answer).toEqual({ typed: true, code: 'AUTH_REQUIRED', status: 401 });
      expect(tab.problems).toEqual([]);
    } finally {
      await tab.close();
    }
  });
});
