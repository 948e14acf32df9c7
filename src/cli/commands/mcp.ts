// agent-board mcp: the MCP server over stdio for one agent, configured by BOARD_URL and BOARD_TOKEN
// (or what `login` stored), BOARD_PROJECT for an account token, BOARD_MCP_TOOLS (core, all, or
// names) and BOARD_MCP_IDLE_SECONDS (silence after which held leases are no longer renewed; each
// lease's own length by default); each call to the board waits for its answer as the CLI's do
// (--timeout, BOARD_TIMEOUT_SECONDS, 30 s). The server (src/mcp/stdio.ts) and the MCP SDK load
// only here, so the other commands start without them.
import type { Command } from 'commander';
import { connection, noTokenMessage, type GlobalOptions } from '../config.js';
import { AuthError, UsageError } from '../exit-codes.js';
import { fetchWithin } from '../http-fetch.js';

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
      if (!conn.token) throw new AuthError(noTokenMessage(conn, 'set BOARD_TOKEN in the MCP server’s environment'));
      const idle = o.idle ?? process.env.BOARD_MCP_IDLE_SECONDS;
      if (idle !== undefined && !/^\d+(\.\d+)?$/.test(idle))
        throw new UsageError(`the idle time is a number of seconds, not ${idle}`);
      const { serveStdio, ToolSelectionError } = await import('../../mcp/stdio.js');
      try {
        const { tools, closed } = await serveStdio({
          baseUrl: conn.baseUrl,
          token: conn.token,
          projectId: conn.projectId,
          tools: o.tools ?? process.env.BOARD_MCP_TOOLS,
          idleMs: idle === undefined ? undefined : Number(idle) * 1000,
          // No answer within the time-out is the tools' BOARD_UNREACHABLE, not a call left hanging.
          fetch: fetchWithin(conn.timeoutSeconds),
        });
        process.stderr.write(`agent-board mcp: ${tools} tools for ${conn.baseUrl}\n`);
        await closed;
      } catch (e) {
        throw e instanceof ToolSelectionError ? new UsageError(e.message) : e;
      }
    });
}
