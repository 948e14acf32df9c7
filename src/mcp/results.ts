// Tool results: pending notices first (a block of their own, before anything else), then the
// answer as JSON text and as structured content. A refusal is a tool error (isError) carrying the
// registry's code, meaning and fix; the few refusals made here, before the board is asked, carry
// codes of their own in the same shape.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BoardApiError } from './client.js';
import { noticeText, type Notice } from './notices.js';

/** Refusals the MCP server makes itself (the board's own codes come from its registry). */
export const LOCAL_ERRORS = {
  NO_LEASE_HERE: {
    status: 409,
    meaning: 'This session holds no lease that matches: none was claimed through it, or the one it held has ended.',
    fix: 'Call board_status to see your leases; claim_work first, or pass the leaseId claim_work gave you.',
  },
  LEASE_AMBIGUOUS: {
    status: 409,
    meaning: 'This session holds more than one lease, so the item must be named.',
    fix: 'Pass the workId of the lease you mean.',
  },
  BOARD_UNREACHABLE: {
    status: 503,
    meaning: 'The board did not answer: the network, its address, or the board itself is down.',
    fix: 'Retry shortly; if it persists, check BOARD_URL.',
  },
  NO_CREDENTIAL: {
    status: 401,
    meaning: 'No board token is configured for this MCP server.',
    fix: 'Set BOARD_TOKEN (a workspace token, agb_…) in the server’s environment, or run `agent-board login` once.',
  },
} as const satisfies Record<string, { status: number; meaning: string; fix: string }>;

export type LocalCode = keyof typeof LOCAL_ERRORS;

export class LocalError extends Error {
  constructor(
    readonly code: LocalCode,
    message: string,
  ) {
    super(message);
  }
}

/** The refusal as the agent reads it: the same fields whether the board or this server refused. */
export interface Refusal {
  code: string;
  status: number;
  message: string;
  meaning: string;
  fix: string;
  details: Record<string, unknown> | null;
  requestId: string | null;
  retryAfter: number | null;
}

export function refusalOf(error: unknown): Refusal {
  if (error instanceof BoardApiError) {
    const { code, status, meaning, fix, details, requestId, retryAfter } = error;
    return {
      code,
      status,
      message: inWords(error.message.replace(/^[A-Z_]+: /, ''), code, meaning),
      meaning,
      fix,
      details,
      requestId,
      retryAfter,
    };
  }
  if (error instanceof LocalError)
    return {
      code: error.code,
      ...LOCAL_ERRORS[error.code],
      message: error.message,
      details: null,
      requestId: null,
      retryAfter: null,
    };
  // fetch's own failure (refused connection, DNS): the board never answered.
  const message =
    error instanceof Error
      ? error.cause instanceof Error
        ? `${error.message}: ${error.cause.message}`
        : error.message
      : String(error);
  return {
    code: 'BOARD_UNREACHABLE',
    ...LOCAL_ERRORS.BOARD_UNREACHABLE,
    message,
    details: null,
    requestId: null,
    retryAfter: null,
  };
}

/**
 * The message, saying what happened where it only names its code: the item machine refuses with
 * "W-1 (awaiting_verify): VERIFY_NOT_INDEPENDENT" (machines/board-commands.ts), which tells an
 * agent nothing the code line did not; the code's meaning takes the code's place.
 */
export function inWords(message: string, code: string, meaning: string): string {
  const text = message.trim();
  if (text === code) return meaning;
  return text.endsWith(`: ${code}`) ? `${text.slice(0, -code.length)}${meaning}` : message;
}

/** The meaning, unless the message already says it (a refusal with no message of its own is its meaning). */
export const meaningBeyond = (r: Pick<Refusal, 'message' | 'meaning'>): string | null =>
  r.message.includes(r.meaning) ? null : r.meaning;

function noticeBlock(notices: Notice[]): CallToolResult['content'] {
  if (!notices.length) return [];
  return [
    {
      type: 'text',
      text: `BOARD NOTICES (read these before anything else):\n${notices.map((n) => `- ${noticeText(n)}`).join('\n')}`,
    },
  ];
}

export function toolResult(notices: Notice[], result: unknown): CallToolResult {
  return {
    content: [...noticeBlock(notices), { type: 'text', text: JSON.stringify(result, null, 2) }],
    structuredContent: { notices, result },
  };
}

export function toolError(notices: Notice[], error: unknown): CallToolResult {
  const r = refusalOf(error);
  const meaning = meaningBeyond(r);
  const lines = [
    `REFUSED ${r.code} (${r.status}): ${r.message}`,
    ...(meaning ? [`meaning: ${meaning}`] : []),
    `fix: ${r.fix}`,
  ];
  if (r.details) lines.push(`details: ${JSON.stringify(r.details)}`);
  if (r.retryAfter !== null) lines.push(`retry after: ${r.retryAfter} s`);
  return {
    isError: true,
    content: [...noticeBlock(notices), { type: 'text', text: lines.join('\n') }],
    structuredContent: { notices, error: r },
  };
}
