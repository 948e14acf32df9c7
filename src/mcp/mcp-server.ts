// The MCP server over a board session, the same for both transports: the selected tools, each call
// wrapped so pending notices come first in its result and a refusal is a tool error. Arguments are
// checked against the tool's input here too, so that a mistake is refused in that same shape
// (REFUSED INVALID_INPUT) rather than by the SDK as a bare JSON-RPC error, and an argument the tool
// does not take is refused there too rather than dropped by the SDK.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isAppError } from '../errors/app-error.js';
import { ERRORS } from '../errors/registry.js';
import { parseWith } from '../http/validation.js';
import { BoardApiError } from './client.js';
import { extraTools } from './extra-tools.js';
import { noticeLevel, noticeText, type Notice } from './notices.js';
import { toolError, toolResult } from './results.js';
import type { BoardSession } from './session.js';
import { describeTool } from './tool-codes.js';
import { inputOf, selectTools, type ToolDef, type ToolSelection } from './tool-set.js';
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
        inputSchema: lenientInput(tool, session),
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
    outcome = { value: await tool.run(argumentsOf(tool, args) as never) };
  } catch (error) {
    outcome = { error };
  }
  const notices = [...before, ...(await session.afterCall())];
  return 'error' in outcome ? toolError(notices, outcome.error) : toolResult(notices, outcome.value);
}

/** The arguments as the tool's input reads them; refused as the board refuses a body that fails its schema. */
function argumentsOf(tool: ToolDef, args: unknown): unknown {
  try {
    return parseWith(inputOf(tool), args ?? {}, 'arguments');
  } catch (error) {
    if (!isAppError(error)) throw error;
    const { meaning, fix } = ERRORS[error.code];
    throw new BoardApiError({
      status: error.status,
      code: error.code,
      message: error.message,
      meaning,
      fix,
      details: error.details ?? null,
    });
  }
}

/** The lenient inputs registered, by session kind and tool (a tool's input follows from those two). */
const LENIENT = new Map<string, z.ZodObject>();

/**
 * The input registered with the SDK: every property takes anything, even left out, and so does any
 * other key (the SDK would strip it unseen: runTool checks the tool's own input, which refuses it),
 * each property carrying its JSON Schema, and the object naming the properties the tool requires
 * and no others allowed, so the schema the SDK lists is the tool's own.
 */
function lenientInput(tool: ToolDef, session: BoardSession): z.ZodObject {
  const keys = Object.keys(tool.input);
  const key = `${session.keepsLeases ? 'live' : 'log'}:${tool.name}:${keys.join(',')}`;
  const known = LENIENT.get(key);
  if (known) return known;
  // As the SDK lists a tool's input (McpServer's tools/list).
  const json = toJsonSchemaCompat(inputOf(tool), { strictUnions: true, pipeStrategy: 'input' }) as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
    additionalProperties?: unknown;
    $defs?: unknown;
    definitions?: unknown;
  };
  if (json.$defs || json.definitions)
    throw new Error(`${tool.name}: an input with shared definitions cannot be listed`);
  const lenient = z
    .looseObject(Object.fromEntries(keys.map((k) => [k, z.unknown().optional().meta(json.properties![k]!)])))
    .meta({ ...(json.required && { required: json.required }), additionalProperties: json.additionalProperties });
  LENIENT.set(key, lenient);
  return lenient;
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
