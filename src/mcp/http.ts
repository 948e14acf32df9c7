// POST /mcp: the board's MCP server over Streamable HTTP, stateless (a server and transport per
// request, no session id). It is a route like any other, so the pipeline authenticates the Bearer
// token (or a session with its CSRF token) before anything runs, and refuses a missing or bad one
// with the registry's 401. The transport itself draws on no budget (rate class identity): each
// tool's board operations run in-process through the same pipeline with the caller's credential,
// and draw on the caller's budgets exactly as the REST calls would. The notices' two reads, which
// the caller did not ask for, draw on none (log-session.ts says what bounds them). GET and DELETE
// are answered 405 (no server-initiated stream without a session); notices travel on each call's
// own stream.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { defineRoute, type BodyStream, type Reply, type Route } from '../http/route.js';
import { BoardClient } from './client.js';
import { InProcessRoutes, type InProcessDeps } from './in-process.js';
import { LogSession, NOTICE_READS, ToldMemory } from './log-session.js';
import { allTools, createBoardMcpServer } from './mcp-server.js';
import { parseSelection } from './tool-set.js';

export const MCP_PATH = '/mcp';

const McpQuery = z.object({
  tools: z.string().max(2000).optional().describe('core (default), all, or tool names separated by commas.'),
  projectId: z.string().max(64).optional().describe('The board the tools act on; a workspace token’s own by default.'),
});

/** The headers the transport reads; the credential stays with the pipeline and the inner calls. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'last-event-id'];

export function mcpRoute(deps: InProcessDeps): Route {
  const routes = new InProcessRoutes(deps, NOTICE_READS);
  const memory = new ToldMemory();
  return defineRoute<unknown, z.infer<typeof McpQuery>>({
    method: 'post',
    path: MCP_PATH,
    group: 'mcp',
    summary: 'The board’s MCP server (Streamable HTTP, stateless): the agent tools over the caller’s Bearer token.',
    auth: 'bearer-or-session',
    bodyKind: 'json',
    query: McpQuery,
    rate: 'identity',
    errors: [],
    responses: {
      200: { description: 'A JSON-RPC answer as an SSE stream (text/event-stream), or 202 for notifications.' },
    },
    async handler({ ctx, body, query }) {
      const inner = routes.open({ headers: ctx.headers, address: ctx.remoteAddress, requestId: ctx.requestId });
      const baseUrl = 'http://in-process.invalid';
      const session = new LogSession({
        client: new BoardClient({ baseUrl, fetch: inner.fetch }),
        noticeClient: new BoardClient({ baseUrl, fetch: inner.freeFetch }),
        drew: () => inner.takeDrawn() > 0,
        query: query.projectId ? { projectId: query.projectId } : {},
        principal: ctx.identity!.principal,
        now: ctx.now,
        memory,
      });
      let selection;
      try {
        selection = parseSelection(
          query.tools,
          allTools(session).map((t) => t.name),
        );
      } catch (e) {
        throw new AppError('INVALID_INPUT', (e as Error).message, { field: 'query.tools' });
      }
      const server = createBoardMcpServer(session, selection);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await server.connect(transport);
      const headers = new Headers();
      for (const name of TRANSPORT_HEADERS) if (ctx.headers[name] !== undefined) headers.set(name, ctx.headers[name]);
      const response = await transport.handleRequest(
        new Request(`http://in-process.invalid${MCP_PATH}`, { method: 'POST', headers }),
        { parsedBody: body },
      );
      return replyOf(response, () => server.close());
    },
  });
}

/** The transport's answer as the pipeline writes it; the server closes once the answer is out. */
async function replyOf(response: Response, close: () => Promise<void>): Promise<Reply> {
  const headers: Record<string, string> = {};
  response.headers.forEach(
    (value, name) => void (name !== 'content-type' && name !== 'connection' && (headers[name] = value)),
  );
  const contentType = response.headers.get('content-type') ?? undefined;
  if (response.body && contentType?.startsWith('text/event-stream')) {
    return { status: response.status, headers, contentType, body: closing(response.body, close) };
  }
  const text = response.body ? await response.text() : '';
  await close();
  return text
    ? { status: response.status, headers, contentType: contentType ?? 'application/json', body: text }
    : { status: response.status, headers };
}

async function* closing(stream: ReadableStream<Uint8Array>, close: () => Promise<void>): BodyStream {
  try {
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) yield chunk;
  } finally {
    await close().catch(() => undefined);
  }
}
