// Every MCP tool's description names every code the tool can refuse with, read from the route
// table so the two cannot drift: src/mcp/route-codes.ts is what the routes the tools call declare
// (rewritten by `npx vitest run test/mcp/tool-codes.test.ts -u`, refused here while it differs),
// each tool calls only the operations it declares (run against a board that records what it is
// asked), the descriptions listed over stdio and /mcp name exactly those codes and the server's
// own, and after a lost lease submit_work's refusal is one its description names.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors/registry.js';
import { routeErrors } from '../../src/http/route-errors.js';
import { operationOf, type Route } from '../../src/http/route.js';
import { BoardClient, UNEXPECTED_RESPONSE } from '../../src/mcp/client.js';
import { LiveSession } from '../../src/mcp/live-session.js';
import { LogSession, ToldMemory } from '../../src/mcp/log-session.js';
import { allTools } from '../../src/mcp/mcp-server.js';
import { LOCAL_ERRORS } from '../../src/mcp/results.js';
import type { BoardSession } from '../../src/mcp/session.js';
import type { ToolDef } from '../../src/mcp/tool-set.js';
import { head, newBoard } from '../support/board.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { closeAgents, httpAgent, refusal, stdioAgent, type McpAgent } from './agents.js';

const ROUTE_CODES_FILE = fileURLToPath(new URL('../../src/mcp/route-codes.ts', import.meta.url));
/** The codes the stdio server answers by itself: to any call, and to a call naming a lease it must find. */
const STDIO_ANY = ['BOARD_UNREACHABLE', UNEXPECTED_RESPONSE];
const STDIO_LEASE = ['NO_LEASE_HERE', 'LEASE_AMBIGUOUS'];
const LEASE_TOOLS = ['renew_lease', 'submit_work', 'release_lease', 'report_progress'];
const KNOWN = new Set<string>([...ERROR_CODES, ...Object.keys(LOCAL_ERRORS), UNEXPECTED_RESPONSE]);

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ LEASE_MIN_TTL_SECONDS: '1' });
});
afterAll(async () => {
  await srv.stop();
});
afterEach(closeAgents);

const tokenOf = (agent: { defaults: Record<string, string> }): string =>
  agent.defaults.authorization!.slice('Bearer '.length);
const routeOf = (operation: string): Route => {
  const route = srv.server.routes.find((r) => operationOf(r) === operation);
  if (!route) throw new Error(`no route ${operation}`);
  return route;
};

/** A session of each kind, over `baseUrl` (nothing is asked of it until a tool runs). */
function sessions(baseUrl: string): { live: LiveSession; log: LogSession } {
  const client = new BoardClient({ baseUrl });
  return {
    live: new LiveSession({ baseUrl, token: 'agb_recorded', push: () => undefined }),
    log: new LogSession({
      client,
      noticeClient: client,
      drew: () => false,
      query: {},
      principal: 'agent:recorded',
      now: Date.now(),
      memory: new ToldMemory(),
    }),
  };
}

/** Each tool's declared operations, by session kind. */
function declared(): { live: Map<string, readonly string[]>; log: Map<string, readonly string[]> } {
  const { live, log } = sessions('http://127.0.0.1:9');
  const byName = (tools: ToolDef[]) => new Map(tools.map((t) => [t.name, t.calls]));
  live.close();
  return { live: byName(allTools(live)), log: byName(allTools(log)) };
}

/** src/mcp/route-codes.ts as the route table makes it, formatted as the repository is. */
async function routeCodesSource(): Promise<string> {
  const { live, log } = declared();
  const operations = [...new Set([...live.values(), ...log.values()].flat())].sort();
  const entries = operations.map((operation) => {
    const route = routeOf(operation);
    const own = [...route.errors];
    const stages = routeErrors(route).filter((c) => !own.includes(c));
    return `  '${operation}': {\n    own: '${own.join(' ')}',\n    stages: '${stages.join(' ')}',\n  },`;
  });
  const source = [
    '// What each board operation the MCP tools call can refuse with, as its route declares: its own',
    '// `errors` (with what defineRoute adds), and the codes its pipeline stages add (src/http/route-errors.ts).',
    '// Generated from the route table: test/mcp/tool-codes.test.ts fails while this differs from it, and',
    '// `npx vitest run test/mcp/tool-codes.test.ts -u` rewrites it. Edit the routes, not this.',
    'export const ROUTE_CODES = {',
    ...entries,
    '} as const;',
    '',
    '/** A board operation a tool may call, as "METHOD /path/{param}". */',
    'export type Operation = keyof typeof ROUTE_CODES;',
    '',
  ].join('\n');
  return prettier.format(source, { ...(await prettier.resolveConfig(ROUTE_CODES_FILE)), filepath: ROUTE_CODES_FILE });
}

/** The codes a description names (a word shaped like a code that is none fails). */
function codesIn(description: string): string[] {
  const words = (description.match(/\b[A-Z][A-Z0-9_]{2,}\b/g) ?? []).filter((w) => {
    if (KNOWN.has(w)) return true;
    expect(w.includes('_'), `${w} is no code`).toBe(false); // LEASE LOST and the like are words
    return false;
  });
  return [...new Set(words)].sort();
}

/**
 * What the test derives a tool's codes to be: its operations' codes by the route table, and the
 * server's own (INVALID_INPUT for arguments that fail its input or that it does not take, refused
 * before any board call: a tool that takes none refuses any).
 */
function derived(name: string, calls: readonly string[], stdio: boolean): string[] {
  const codes = new Set<string>(calls.flatMap((op) => routeErrors(routeOf(op))));
  if (stdio) for (const c of [...STDIO_ANY, ...(LEASE_TOOLS.includes(name) ? STDIO_LEASE : [])]) codes.add(c);
  codes.add('INVALID_INPUT');
  return [...codes].sort();
}

describe('tool refusal codes', () => {
  it('src/mcp/route-codes.ts is what the route table declares for the operations the tools call', async () => {
    await expect(await routeCodesSource()).toMatchFileSnapshot(ROUTE_CODES_FILE);
  });

  it('each tool calls only the operations it declares, and each it declares', async () => {
    const asked: string[] = [];
    const at = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
    const grant = {
      workId: 'W-1',
      leaseId: 'lease_rec',
      purpose: 'work',
      fencingToken: 1,
      renewBy: at(300),
      expiresAt: at(600),
    };
    const answer = {
      ...grant,
      lease: grant,
      action: 'renew',
      leases: [],
      principal: 'agent:recorded',
      workspace: null, // no board to hold a socket to: the keepers renew over REST alone
      events: [],
      shouts: [],
      items: [],
      entries: [],
      clauses: [],
    };
    const board: Server = createServer((req, res) => {
      asked.push(`${req.method} ${new URL(req.url!, 'http://x').pathname}`);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => board.listen(0, '127.0.0.1', resolve));
    const { live, log } = sessions(`http://127.0.0.1:${(board.address() as AddressInfo).port}`);
    const args = {
      workId: 'W-1',
      leaseId: 'lease_rec',
      head: head(1),
      verdict: 'pass',
      text: 'hello',
      note: 'half way',
      items: [{ title: 'x' }],
      slug: 'house-style',
      title: 't',
      clauseId: 'S-1',
      version: 1,
      answerDigest: `sha256:${'ab'.repeat(32)}`,
    };
    try {
      for (const session of [live, log] as BoardSession[]) {
        const tools = new Map(allTools(session).map((t) => [t.name, t]));
        const run = async (tool: ToolDef, input: object): Promise<string[]> => {
          if (LEASE_TOOLS.includes(tool.name)) await tools.get('claim_work')!.run({ workId: 'W-1' } as never);
          asked.length = 0;
          await tool.run(input as never).catch(() => undefined); // a reply it cannot use is no matter here
          return [...asked];
        };
        for (const tool of tools.values()) {
          const templates = tool.calls.map((op) => new RegExp(`^${op.replace(/\{\w+\}/g, '[^/]+')}$`));
          const seen = [...(await run(tool, args)), ...(tool.name === 'read_spec' ? await run(tool, {}) : [])];
          for (const request of seen)
            expect(
              templates.some((t) => t.test(request)),
              `${tool.name} asked ${request}`,
            ).toBe(true);
          for (const t of templates)
            expect(
              seen.some((request) => t.test(request)),
              `${tool.name} never asked ${t.source}`,
            ).toBe(true);
        }
      }
    } finally {
      live.close();
      board.close();
    }
  });

  it('names in each tool’s description exactly the codes its operations declare and the server’s own, over stdio and /mcp', async () => {
    const board = await newBoard(srv.url);
    const token = tokenOf(await board.agent('reader'));
    const calls = declared();
    const check = async (agent: McpAgent, stdio: boolean) => {
      const { tools } = await agent.client.listTools();
      expect(tools.length).toBe(calls.log.size);
      for (const tool of tools) {
        const own = (stdio ? calls.live : calls.log).get(tool.name)!;
        expect(codesIn(tool.description!), tool.name).toEqual(derived(tool.name, own, stdio));
      }
    };
    await check(await stdioAgent(srv.url, token, { BOARD_MCP_TOOLS: 'all' }), true);
    await check(await httpAgent(srv.url, token, '?tools=all'), false);
    // The list follows the routes: claim_work names what POST /api/claim declares, and what GET /api/items/{workId} does.
    const claim = (await (await httpAgent(srv.url, token)).client.listTools()).tools.find(
      (t) => t.name === 'claim_work',
    )!;
    for (const code of [...routeOf('POST /api/claim').errors, ...routeOf('GET /api/items/{workId}').errors])
      expect(claim.description).toContain(code);
  }, 60_000);

  it('after a lost lease, submit_work refuses with a code its description names (stdio: NO_LEASE_HERE; /mcp: the board’s)', async () => {
    const board = await newBoard(srv.url);
    const stdioToken = tokenOf(await board.agent('stdio-worker'));
    const httpToken = tokenOf(await board.agent('http-worker'));
    const stdio = await stdioAgent(srv.url, stdioToken, { BOARD_MCP_IDLE_SECONDS: '0.2' });
    const http = await httpAgent(srv.url, httpToken);
    await stdio.ok('create_items', { items: [{ title: 'one' }, { title: 'two' }] });
    await stdio.ok('claim_work', { workId: 'W-1', ttlSeconds: 1 });
    const { lease } = await http.ok('claim_work', { workId: 'W-2', ttlSeconds: 1 });
    // Quiet past the idle time: nothing renews either lease, and the board expires both.
    await expect
      .poll(
        async () =>
          (await board.owner.get(`/api/items?projectId=${board.projectId}`)).body.items.map(
            (i: { state: string }) => i.state,
          ),
        { timeout: 15_000, interval: 200 },
      )
      .toEqual(['ready', 'ready']);

    const described = async (agent: McpAgent) =>
      (await agent.client.listTools()).tools.find((t) => t.name === 'submit_work')!.description!;
    const overStdio = await stdio.call('submit_work', { workId: 'W-1', head: head(6) });
    expect(overStdio.isError).toBe(true);
    expect(refusal(overStdio).code).toBe('NO_LEASE_HERE');
    expect(codesIn(await described(stdio))).toContain('NO_LEASE_HERE');
    const overHttp = await http.call('submit_work', { leaseId: lease.leaseId, head: head(6) });
    expect(overHttp.isError).toBe(true);
    expect(refusal(overHttp).code).toMatch(/^LEASE_(EXPIRED|NOT_HELD)$/);
    expect(codesIn(await described(http))).toContain(refusal(overHttp).code);
  }, 60_000);
});
