// The MCP server over stdio for one agent (`agent-board mcp`): a live session on the board, the
// selected tools, and a clean stop when the client closes stdin or a signal comes. stdout carries
// the protocol only; anything for people goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { LiveSession } from './live-session.js';
import { allTools, createBoardMcpServer, loggingNotification } from './mcp-server.js';
import { parseSelection, selectTools } from './tool-set.js';

export interface StdioOptions {
  baseUrl: string;
  token: string;
  projectId?: string | undefined;
  /** core, all, or tool names separated by commas. */
  tools?: string | undefined;
  /** Silence after which held leases are no longer renewed. */
  idleMs?: number | undefined;
  /**
   * The fetch every call to the board goes through: the CLI's, which gives up on an answer that has
   * not come within its time-out (a silent board is then BOARD_UNREACHABLE, not a tool call hung).
   */
  fetch: (request: Request) => Promise<Response>;
}

/** A tool selection that names no tool we have: the caller's mistake, said before anything is served. */
export class ToolSelectionError extends Error {}

/**
 * Serves until stdin ends or SIGINT/SIGTERM, when `closed` resolves; a bad selection throws
 * ToolSelectionError first.
 */
export async function serveStdio(options: StdioOptions): Promise<{ tools: number; closed: Promise<void> }> {
  let server: McpServer | null = null;
  const session = new LiveSession({
    baseUrl: options.baseUrl,
    token: options.token,
    fetch: options.fetch,
    ...(options.projectId && { projectId: options.projectId }),
    ...(options.idleMs !== undefined && { idleMs: options.idleMs }),
    push: (notice) => void server?.sendLoggingMessage(loggingNotification(notice).params).catch(() => undefined),
  });
  let selection;
  try {
    selection = parseSelection(
      options.tools,
      allTools(session).map((t) => t.name),
    );
  } catch (e) {
    throw new ToolSelectionError((e as Error).message);
  }
  server = createBoardMcpServer(session, selection);
  const closed = new Promise<void>((resolve) => {
    const stop = async () => {
      session.close();
      await server?.close().catch(() => undefined);
      resolve();
    };
    process.stdin.once('end', () => void stop());
    process.once('SIGINT', () => void stop());
    process.once('SIGTERM', () => void stop());
  });
  await server.connect(new StdioServerTransport());
  session.start();
  return { tools: selectTools(allTools(session), selection).length, closed };
}
