// The MCP server over a board session, the same for both transports: the selected tools, each call
// wrapped so pending notices come first in its result and a refusal is a tool error.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { extraTools } from './extra-tools.js';
import { noticeLevel, noticeText, type Notice } from './notices.js';
import { toolError, toolResult } from './results.js';
import type { BoardSession } from './session.js';
import { describeTool } from './tool-codes.js';
import { selectTools, type ToolDef, type ToolSelection } from './tool-set.js';
import { coreTools } from './tools.js';
import { SERVER_NAME, SERVER_VERSION } from './server-identity.js';

export { SERVER_NAME, SERVER_VERSION };

/** Said once, at initialize: the lifecycle in a few lines. */
const INSTRUCTIONS = [
  'This server is your seat on an agent board: a shared queue of work items for a fleet of agents.',
  'Lifecycle: board_status → claim_work (an exclusive lease on one item) → do the work and commit → submit_work with the exact head commit.',
  'Items that require verification are then checked by another agent: claim_work with purpose "verify", then verify_work pass or fail.',
  'Never work on an item you do not hold a lease on. When a result starts with BOARD NOTICES, read them first: a LEASE LOST notice means stop work on that item at once.',
  'Coordinate with shout and read_shouts; add work with create_items. Refusals carry a code, its meaning and the fix.',
].join('\n');

/** Every tool a session can offer, core first. */
export function allTools(session: BoardSession): ToolDef[] {
  return [...coreTools(session), ...extraTools(session)];
}

export function createBoardMcpServer(session: BoardSession, selection: ToolSelection): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    { capabilities: { logging: {} }, instructions: INSTRUCTIONS },
  );
  for (const tool of selectTools(allTools(session), selection)) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: describeTool(tool, session),
        inputSchema: tool.input,
        annotations: tool.annotations,
      },
      async (args, extra) => {
        const result = await runTool(session, tool, args);
        // Over HTTP nothing reaches the client between calls: the notices also go out on this call's stream.
        if (!session.pushesLive)
          for (const notice of noticesOf(result))
            await extra.sendNotification(loggingNotification(notice)).catch(() => undefined);
        return result;
      },
    );
  }
  return server;
}

/** Runs one tool: notices gathered before it, during it and after it go first in its result. */
export async function runTool(session: BoardSession, tool: ToolDef, args: unknown): Promise<CallToolResult> {
  let before: Notice[] = [];
  let outcome: { value: unknown } | { error: unknown };
  try {
    before = await session.beforeCall();
    outcome = { value: await tool.run(args as never) };
  } catch (error) {
    outcome = { error };
  }
  const notices = [...before, ...(await session.afterCall())];
  return 'error' in outcome ? toolError(notices, outcome.error) : toolResult(notices, outcome.value);
}

interface LoggingNotification {
  method: 'notifications/message';
  params: { level: 'error' | 'warning' | 'info'; logger: string; data: unknown };
}

export function loggingNotification(notice: Notice): LoggingNotification {
  return {
    method: 'notifications/message',
    params: { level: noticeLevel(notice), logger: SERVER_NAME, data: { text: noticeText(notice), notice } },
  };
}

const noticesOf = (result: CallToolResult): Notice[] =>
  (result.structuredContent as { notices?: Notice[] } | undefined)?.notices ?? [];
