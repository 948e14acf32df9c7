// The agent-board CLI as a subprocess against a running server: login through the device flow (the
// board's owner approves it here), the stored token used by the next commands, claim and submit
// with --json parsed, watch printing events live and resuming by seq, tokens with an account token,
// and exit codes that follow the class of the error.
import { stat, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configPath, writeConfig } from '../../src/cli/config.js';
import { head, newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tempDir, type TempDir } from '../support/temp.js';
import { run, start, type Running } from './run.js';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.stop();
});

const dirs: TempDir[] = [];
const running: Running[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) r.child.kill('SIGKILL');
  await Promise.all(dirs.splice(0).map((d) => d.remove()));
});
/** An environment with a config directory of its own. */
async function home(env: Record<string, string> = {}): Promise<Record<string, string>> {
  const dir = await tempDir();
  dirs.push(dir);
  return { XDG_CONFIG_HOME: dir.path, ...env };
}
const tokenOf = (agent: { defaults: Record<string, string> }): string =>
  agent.defaults.authorization!.slice('Bearer '.length);

/**
 * The login tests run at once (each waits out the device flow's poll interval): what one starts
 * is ended when that test finishes, through its own onTestFinished, not by the afterEach above,
 * which would end another's.
 */
type OnFinished = (fn: () => Promise<void> | void) => void;
async function ownHome(onTestFinished: OnFinished): Promise<Record<string, string>> {
  const dir = await tempDir();
  onTestFinished(() => dir.remove());
  return { XDG_CONFIG_HOME: dir.path };
}
function ownStart(onTestFinished: OnFinished, args: string[], env: Record<string, string>): Running {
  const r = start(args, env);
  onTestFinished(() => void r.child.kill('SIGKILL'));
  return r;
}

describe.concurrent('agent-board login', () => {
  it('runs the device flow: shows the code, polls until the owner approves, stores the token 0600, and the next commands use it', async ({
    onTestFinished,
  }) => {
    const board = await newBoard(srv.url);
    const env = await ownHome(onTestFinished);
    const login = ownStart(onTestFinished, ['login', '--url', srv.url, '--name', 'cli-test', '--json'], env);
    const prompt = JSON.parse(await login.line('stderr', /userCode/)) as {
      userCode: string;
      verificationUriComplete: string;
      interval: number;
    };
    expect(prompt.userCode).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(prompt.verificationUriComplete).toContain(prompt.userCode);
    const approved = await board.owner.post('/api/auth/device/approve', {
      userCode: prompt.userCode,
      projectId: board.projectId,
      approve: true,
    });
    expect(approved.status).toBe(200);

    const { code, stdout } = await login.ended;
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as { principal: string; projectId: string; name: string; config: string };
    expect(result).toMatchObject({
      principal: expect.stringMatching(/^agent:/),
      projectId: board.projectId,
      name: 'cli-test',
      config: join(env.XDG_CONFIG_HOME!, 'agent-board', 'config.json'),
    });
    expect((await stat(result.config)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(result.config, 'utf8')) as { token: string };
    expect(stored).toMatchObject({ url: srv.url, token: expect.stringMatching(/^agb_/), principal: result.principal });
    expect(stdout + login.stderr()).not.toContain(stored.token); // the secret is never printed

    // No URL, no token given: the stored ones.
    const status = await run(['status', '--json'], env);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ projectId: board.projectId, lastSeq: expect.any(Number) });
    const shout = await run(['shout', 'hello', 'from', 'the', 'terminal', '--json'], env);
    expect(JSON.parse(shout.stdout)).toMatchObject({ from: result.principal, text: 'hello from the terminal' });
  }, 60_000);

  it('stops with exit 3 when the owner denies the code', async ({ onTestFinished }) => {
    const board = await newBoard(srv.url);
    const login = ownStart(onTestFinished, ['login', '--url', srv.url], await ownHome(onTestFinished));
    const code = /\b([A-Z0-9]{4}-[A-Z0-9]{4})\b/.exec(await login.line('stderr', /\b[A-Z0-9]{4}-[A-Z0-9]{4}\b/))![1]!;
    await board.owner.post('/api/auth/device/approve', { userCode: code, projectId: board.projectId, approve: false });
    const ended = await login.ended;
    expect(ended.code).toBe(3);
    expect(ended.stderr).toMatch(/error: ACCESS_DENIED \(400\)/);
  }, 60_000);
  it('waits longer after SLOW_DOWN, as long as the board asks, and keeps that interval', async ({ onTestFinished }) => {
    // A stand-in board that answers the polls SLOW_DOWN (interval 3), AUTHORIZATION_PENDING, then the token.
    const polls: number[] = [];
    const refusal = (code: string, details: Record<string, unknown> | null) => ({
      error: { code, status: 400, message: code, meaning: code, fix: 'poll slower', details, requestId: 'r' },
    });
    const fake = createServer((req, res) => {
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      req.resume();
      if (req.url === '/api/auth/device/start')
        return send(200, {
          deviceCode: 'dev',
          userCode: 'ABCD-EFGH',
          verificationUri: 'http://fake/device',
          verificationUriComplete: 'http://fake/device?code=ABCD-EFGH',
          interval: 1,
          expiresIn: 600,
        });
      polls.push(Date.now());
      if (polls.length === 1) return send(400, refusal('SLOW_DOWN', { interval: 3 }));
      if (polls.length === 2) return send(400, refusal('AUTHORIZATION_PENDING', null));
      const token = {
        id: 't1',
        name: 'slow',
        prefix: 'agb_x',
        scope: 'workspace',
        projectId: 'p1',
        role: 'member',
        resources: null,
        agentId: 'a1',
        expiresAt: null,
        lastUsedAt: null,
        createdAt: new Date().toISOString(),
      };
      send(200, { token, secret: 'agb_secret_from_the_fake' });
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const env = await ownHome(onTestFinished);
      const ended = await run(
        ['login', '--url', `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, '--json'],
        env,
      );
      expect(ended.code).toBe(0);
      expect(JSON.parse(ended.stdout)).toMatchObject({ principal: 'agent:a1', projectId: 'p1' });
      expect(polls).toHaveLength(3);
      expect(polls[1]! - polls[0]!).toBeGreaterThanOrEqual(2900); // 3 s after SLOW_DOWN, not the 1 s it started with
      expect(polls[2]! - polls[1]!).toBeGreaterThanOrEqual(2900); // and from then on
    } finally {
      fake.close();
    }
  }, 60_000);
});

describe('agent-board claim, submit, verify', () => {
  it('claims and submits with --json, keeping the lease id between commands, and a second agent verifies', async () => {
    const board = await newBoard(srv.url);
    const worker = await home({ BOARD_URL: srv.url, BOARD_TOKEN: tokenOf(await board.agent('worker')) });
    const verifier = await home({ BOARD_URL: srv.url, BOARD_TOKEN: tokenOf(await board.agent('verifier')) });
    const added = await run(['items', 'add', 'gated work', '--verify', '--priority', '1', '--json'], worker);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ workId: 'W-1', verify: 'required', priority: 1, state: 'ready' });

    const claim = await run(['claim', '--json'], worker);
    expect(claim.code).toBe(0);
    const grant = JSON.parse(claim.stdout) as { workId: string; leaseId: string; purpose: string; expiresAt: string };
    expect(grant).toMatchObject({ workId: 'W-1', purpose: 'work', leaseId: expect.stringMatching(/^lease_/) });
    const renewed = await run(['renew', 'W-1', '--ttl', '600', '--json'], worker);
    expect(JSON.parse(renewed.stdout)).toMatchObject({
      workId: 'W-1',
      action: 'renew',
      lease: { leaseId: grant.leaseId },
    });
    const submitted = await run(['submit', 'W-1', head(5), '--json'], worker);
    expect(submitted.code).toBe(0);
    expect(JSON.parse(submitted.stdout)).toEqual({ workId: 'W-1', state: 'awaiting_verify' });

    const check = await run(['claim', '--verify', '--json'], verifier);
    expect(JSON.parse(check.stdout)).toMatchObject({ workId: 'W-1', purpose: 'verify' });
    const verdict = await run(['verify', 'W-1', head(5), 'pass', '--json'], verifier);
    expect(JSON.parse(verdict.stdout)).toEqual({ workId: 'W-1', state: 'done' });
    const shown = await run(['items', 'show', 'W-1'], worker);
    expect(shown.stdout).toMatch(/W-1\s+done/);
    expect(shown.stdout).toContain(`submitted: ${head(5)}`);
  }, 60_000);

  it('exits by the class of the error: 4 for a conflict, 2 for usage, 3 for a bad credential, 6 when nothing answers', async () => {
    const board = await newBoard(srv.url);
    const env = await home({ BOARD_URL: srv.url, BOARD_TOKEN: tokenOf(await board.agent('eager')) });
    const nothing = await run(['claim'], env);
    expect(nothing.code).toBe(4);
    expect(nothing.stdout).toBe('');
    expect(nothing.stderr).toContain('error: NOTHING_READY (409)');
    expect(nothing.stderr).toContain('meaning: No item is ready for this principal to claim.');
    expect(nothing.stderr).toContain('fix: Wait for a lease.expired or item event, then claim again.');
    const json = await run(['claim', '--json'], env);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stderr)).toMatchObject({
      error: { code: 'NOTHING_READY', status: 409, fix: expect.any(String), requestId: expect.any(String) },
    });
    expect((await run(['items', 'show', 'W-99'], env)).code).toBe(4);

    expect((await run(['submit', 'W-1', head(1)], env)).code).toBe(2); // no lease claimed from here
    expect((await run(['claim', '--ttl', 'soon'], env)).code).toBe(2);
    expect((await run(['frobnicate'], env)).code).toBe(2);
    expect((await run(['items', 'add', ''], env)).code).toBe(2); // the board refuses the input: 400 INVALID_INPUT

    const stranger = await run(['status'], { ...env, BOARD_TOKEN: 'agb_not_a_token' });
    expect(stranger.code).toBe(3);
    expect(stranger.stderr).toContain('INVALID_SERVICE_TOKEN');
    expect((await run(['status'], await home({ BOARD_URL: srv.url }))).code).toBe(3); // no token at all
    expect((await run(['tokens', 'list'], env)).code).toBe(3); // a workspace token: PROJECT_SCOPE_DENIED
    const down = await run(['status'], { ...env, BOARD_URL: 'http://127.0.0.1:9' });
    expect(down.code).toBe(6);
    expect(down.stderr).toContain('BOARD_UNREACHABLE');
  }, 60_000);
});

describe('a stored login and another board', () => {
  it('says the stored login is for its own board, and how to log in to the one named', async () => {
    const board = await newBoard(srv.url);
    const env = await home();
    const path = configPath({ XDG_CONFIG_HOME: env.XDG_CONFIG_HOME! });
    await writeConfig({ url: `${srv.url}/`, token: tokenOf(await board.agent('stored')) }, path);
    // The stored board, however its address ends: the stored token.
    expect((await run(['status', '--url', srv.url], env)).code).toBe(0);

    const other = 'http://127.0.0.1:9';
    const flag = await run(['status', '--url', other], env);
    expect(flag.code).toBe(3);
    expect(flag.stderr.trim()).toBe(
      `error: no board token for ${other}: the stored login is for ${srv.url}. Run \`agent-board login --url ${other}\` to log in to ${other} (it replaces the stored login), or set BOARD_TOKEN (or pass --token)`,
    );
    const json = await run(['claim', '--json'], { ...env, BOARD_URL: `${other}/` });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr)).toEqual({
      error: { code: 'NO_CREDENTIAL', message: expect.stringContaining(`the stored login is for ${srv.url}.`) },
    });
    expect(JSON.parse(json.stderr).error.message).toContain(`agent-board login --url ${other}\``);
    // The MCP server says the same, pointing at its own environment.
    const mcp = await run(['mcp', '--url', other], env);
    expect(mcp.code).toBe(3);
    expect(mcp.stderr).toContain(`the stored login is for ${srv.url}. Run \`agent-board login --url ${other}\``);
    expect(mcp.stderr).toContain('or set BOARD_TOKEN in the MCP server’s environment');
    // A token given for the other board is used there (nothing answers on it: exit 6, not 3).
    expect((await run(['status', '--url', other, '--token', 'agb_other'], env)).code).toBe(6);
    // No stored login at all: the plain advice.
    const none = await run(['status'], await home({ BOARD_URL: other }));
    expect(none.stderr.trim()).toBe(
      'error: no board token: run `agent-board login`, or set BOARD_TOKEN (or pass --token)',
    );
  }, 60_000);
});

describe('agent-board watch', () => {
  it('prints events live as the board changes, says where it stopped, and resumes from there', async () => {
    const board = await newBoard(srv.url);
    const agent = await board.agent('busy');
    const env = await home({ BOARD_URL: srv.url, BOARD_TOKEN: tokenOf(agent) });
    const watch = start(['watch', '--json'], env);
    running.push(watch);
    await watch.line('stderr', /watching/);
    expect((await agent.post('/api/items', { title: 'seen live' })).status).toBe(201);
    const created = JSON.parse(await watch.line('stdout', /item\.created/)) as {
      seq: number;
      event: { type: string; workId: string; data: { item: { title: string } } };
    };
    expect(created).toMatchObject({
      seq: 1,
      event: { type: 'item.created', workId: 'W-1', data: { item: { title: 'seen live' } } },
    });
    expect((await agent.post('/api/claim', {})).status).toBe(200);
    expect(JSON.parse(await watch.line('stdout', /lease\.granted/))).toMatchObject({
      seq: 2,
      event: { type: 'lease.granted', workId: 'W-1' },
    });
    await agent.post('/api/shouts', { text: 'on it' });
    expect(JSON.parse(await watch.line('stdout', /"type":"shout"/))).toMatchObject({
      shout: { text: 'on it', from: agent.principal },
    });

    const { lastSeq } = (await agent.get('/api/status')).body as { lastSeq: number };
    await watch.line('stdout', new RegExp(`"seq":${lastSeq},`)); // the shout is in the log too
    watch.child.kill('SIGINT');
    const ended = await watch.ended;
    expect(ended.code).toBe(0);
    expect(ended.stderr).toContain(`stopped after seq ${lastSeq}; resume with: agent-board watch --since ${lastSeq}`);

    // Resumed after seq 1: seq 2 is replayed first, then live events; coloured when asked to be.
    const resumed = start(['watch', '--since', '1'], { ...env, FORCE_COLOR: '1' });
    running.push(resumed);
    const replayed = await resumed.line('stdout', /lease\.granted/);
    expect(replayed).toMatch(/#2\s/);
    expect(replayed).toContain('\u001b[33m'); // lease events in yellow
    expect(resumed.stdout()).not.toMatch(/#1\s/);
    await agent.post('/api/items', { title: 'after the resume' });
    expect(await resumed.line('stdout', /item\.created/)).toMatch(new RegExp(`#${lastSeq + 1}\\s.*W-2`));
  }, 60_000);
});

describe('agent-board tokens', () => {
  it('lists, issues and revokes tokens with an account-scoped token', async () => {
    const board = await newBoard(srv.url);
    const issued = await board.owner.post('/api/accounts/tokens', { name: 'ops', scope: 'account' });
    expect(issued.status).toBe(201);
    const env = await home({ BOARD_URL: srv.url, BOARD_TOKEN: issued.body.secret as string });
    const made = await run(
      ['tokens', 'issue', '--name', 'builder-9', '--project', board.projectId, '--role', 'member', '--json'],
      env,
    );
    expect(made.code).toBe(0);
    const token = JSON.parse(made.stdout) as {
      token: { id: string; name: string; scope: string; projectId: string };
      secret: string;
    };
    expect(token).toMatchObject({
      token: { name: 'builder-9', scope: 'workspace', projectId: board.projectId },
      secret: expect.stringMatching(/^agb_/),
    });
    const listed = JSON.parse((await run(['tokens', 'list', '--json'], env)).stdout) as { tokens: { id: string }[] };
    expect(listed.tokens.map((t) => t.id)).toContain(token.token.id);
    expect((await run(['status'], { ...env, BOARD_TOKEN: token.secret })).code).toBe(0);
    expect((await run(['tokens', 'revoke', token.token.id], env)).code).toBe(0);
    expect((await run(['status'], { ...env, BOARD_TOKEN: token.secret })).code).toBe(3);
  }, 60_000);
});
