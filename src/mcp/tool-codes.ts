// The codes a tool can refuse with, named in its description so that an agent meets no code it was
// not told of: those its board operations declare (route-codes.ts, generated from the route table,
// so the list follows the routes), those its session answers by itself (results.ts), and
// INVALID_INPUT for arguments that fail its input (one that takes none refuses any argument).
import { ROUTE_CODES } from './route-codes.js';
import type { BoardSession } from './session.js';
import type { ToolDef } from './tool-set.js';

export interface ToolRefusals {
  /** The tool's own: its operations' declared errors, and the session's for a lease it names. */
  own: string[];
  /** Those of any board call (authentication, input, the rate limit…), and the session's for any call. */
  common: string[];
}

const words = (text: string): string[] => text.split(' ').filter(Boolean);

export function toolRefusals(tool: Pick<ToolDef, 'calls' | 'namesLease'>, session: BoardSession): ToolRefusals {
  const own = new Set<string>();
  const common = new Set<string>();
  for (const operation of tool.calls) {
    const declared: { own: string; stages: string } = ROUTE_CODES[operation];
    for (const code of words(declared.own)) own.add(code);
    for (const code of words(declared.stages)) common.add(code);
  }
  if (tool.namesLease) for (const code of session.refusals.namingLease) own.add(code);
  for (const code of session.refusals.anyCall) common.add(code);
  common.add('INVALID_INPUT'); // arguments that fail its input, or that it does not take (mcp-server.ts)
  for (const code of own) common.delete(code); // said once, as the tool's own
  return { own: [...own], common: [...common] };
}

/** The tool's description as listed: its teaching, then every code it can refuse with. */
export function describeTool(tool: ToolDef, session: BoardSession): string {
  const { own, common } = toolRefusals(tool, session);
  const lists = [own.join(', '), common.length ? `as for any board call: ${common.join(', ')}` : ''].filter(Boolean);
  return `${tool.description}\nRefusals (each a tool error with its code, meaning and fix): ${lists.join('; ')}.`;
}
