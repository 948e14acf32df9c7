// agent-board mcp: the MCP server over stdio for one agent, configured by BOARD_URL and BOARD_TOKEN
// (or what `login` stored), BOARD_PROJECT for an account token, BOARD_MCP_TOOLS (core, all, or
// names) and BOARD_MCP_IDLE_SECONDS (silence after which held leases are no longer renewed; each
// lease's own length by default). stdout carries the protocol only; anything for people goes to stderr.
import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { LiveSession } from '../../mcp/live-session.js';
import { allTools, createBoardMcpServer, loggingNotification } from '../../mcp/mcp-server.js';
import { parseSelection, selectTools } from '../../mcp/tool-set.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { connection, type GlobalOptions } from '../config.js';
import { AuthError, UsageError } from '../exit-codes.js';

export function mcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('Serve the board to an agent as an MCP server over stdio (BOARD_URL, BOARD_TOKEN, BOARD_MCP_TOOLS)')
    .option(
      '--tools <selection>',
      'core (the default eight), all, or tool names separated by commas (default: BOARD_MCP_TOOLS)',
    )
    .option(
      '--idle <seconds>',
      'stop renewing held leases after this much silence (default: BOARD_MCP_IDLE_SECONDS, else each lease’s length)',
    )
    .action(async (o: { tools?: string; idle?: string }, command: Command) => {
      const conn = await connection(command.optsWithGlobals() as GlobalOptions);
      if (!conn.token)
        throw new AuthError(
          'no board token: set BOARD_TOKEN in the MCP server’s environment, or run `agent-board login` once',
        );
      const idle = o.idle ?? process.env.BOARD_MCP_IDLE_SECONDS;
      if (idle !== undefined && !/^\d+(\.\d+)?$/.test(idle))
        throw new UsageError(`the idle time is a number of seconds, not ${idle}`);
      let server: McpServer | null = null;
      const session = new LiveSession({
        baseUrl: conn.baseUrl,
        token: conn.token,
        ...(conn.projectId && { projectId: conn.projectId }),
        ...(idle !== undefined && { idleMs: Number(idle) * 1000 }),
        push: (notice) => void server?.sendLoggingMessage(loggingNotification(notice).params).catch(() => undefined),
      });
      let selection;
      try {
        selection = parseSelection(
          o.tools ?? process.env.BOARD_MCP_TOOLS,
          allTools(session).map((t) => t.name),
        );
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      server = createBoardMcpServer(session, selection);
      const stop = async () => {
        session.close();
        await server?.close().catch(() => undefined);
        process.exit(0);
      };
      process.stdin.once('end', () => void stop());
      process.once('SIGINT', () => void stop());
      process.once('SIGTERM', () => void stop());
      await server.connect(new StdioServerTransport());
      session.start();
      process.stderr.write(
        `agent-board mcp: ${selectTools(allTools(session), selection).length} tools for ${conn.baseUrl}\n`,
      );
    });
}
