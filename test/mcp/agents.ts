// MCP agents for the tests, driven by the SDK's own client: over stdio (the bin spawned as a
// subprocess, as an MCP client would start it; compiled once per run, see test/support/built.ts) and over Streamable HTTP against /mcp.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Notice } from '../../src/mcp/notices.js';
import type { Refusal } from '../../src/mcp/results.js';
import { cliArgs } from '../support/built.js';
import { tempDir, type TempDir } from '../support/temp.js';

export interface McpAgent {
  client: Client;
  /** The logging messages the server sent, as they came. */
  logged: { level: string; data: { text: string; notice: Notice } }[];
  /** Calls a tool; the result as the SDK gives it. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Calls a tool that must succeed; its result value. */
  ok<T = any>(name: string, args?: Record<string, unknown>): Promise<T>; // eslint-disable-line @typescript-eslint/no-explicit-any
  close(): Promise<void>;
}

const open: { close(): Promise<void> }[] = [];
/** Closes every agent a test opened (call from afterEach). */
export async function closeAgents(): Promise<void> {
  await Promise.all(open.splice(0).map((a) => a.close().catch(() => undefined)));
}

async function agentOver(
  transport: StdioClientTransport | StreamableHTTPClientTransport,
  cleanup: () => Promise<void> = async () => undefined,
): Promise<McpAgent> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  const logged: McpAgent['logged'] = [];
  client.setNotificationHandler(
    LoggingMessageNotificationSchema,
    (n) => void logged.push(n.params as McpAgent['logged'][number]),
  );
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const agent: McpAgent = {
    client,
    logged,
    call,
    async ok(name, args) {
      const result = await call(name, args);
      if (result.isError) throw new Error(`${name} refused: ${JSON.stringify(result.content)}`);
      return (result.structuredContent as { result: never }).result;
    },
    async close() {
      await client.close();
      await cleanup();
    },
  };
  open.push(agent);
  return agent;
}

/** The bin's `mcp` command as a subprocess, with its own empty config directory. */
export async function stdioAgent(
  baseUrl: string,
  token: string,
  env: Record<string, string> = {},
): Promise<McpAgent & { stderr: () => string }> {
  const config: TempDir = await tempDir();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...cliArgs(), 'mcp'],
    env: { BOARD_URL: baseUrl, BOARD_TOKEN: token, XDG_CONFIG_HOME: config.path, ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const agent = await agentOver(transport, () => config.remove());
  return Object.assign(agent, { stderr: () => stderr });
}

/** An agent of /mcp with a Bearer token; `query` as in `?tools=all`. */
export function httpAgent(baseUrl: string, token: string, query = ''): Promise<McpAgent> {
  return agentOver(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp${query}`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
}

/** A refused call's refusal. */
export const refusal = (result: CallToolResult): Refusal => (result.structuredContent as { error: Refusal }).error;
export const noticesOf = (result: CallToolResult): Notice[] =>
  (result.structuredContent as { notices: Notice[] }).notices;
export const textOf = (result: CallToolResult, i: number): string =>
  (result.content[i] as { type: 'text'; text: string }).text;

export const CORE_TOOLS = [
  'board_status',
  'claim_work',
  'renew_lease',
  'submit_work',
  'verify_work',
  'shout',
  'read_shouts',
  'create_items',
];
export const DIGEST = `sha256:${'ab'.repeat(32)}`;
