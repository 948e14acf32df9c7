// A tool is data (name, tier, description, input shape, run), like a route. The selection decides
// which the server lists: the core eight by default, every tool with `all`, or a named list
// (BOARD_MCP_TOOLS for stdio, `?tools=` on /mcp), as task-master's tiers do.
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Operation } from './route-codes.js';

export type Tier = 'core' | 'extra';

export interface ToolDef<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  tier: Tier;
  title: string;
  /** A few lines that teach where the tool sits in the lifecycle. */
  description: string;
  input: S;
  /**
   * Every board operation `run` may call, through its session too (a renewal, a verdict, who the
   * caller is): the codes they declare are the tool's, and its description names them (tool-codes.ts).
   */
  calls: readonly Operation[];
  /** It names a lease the session must find (over stdio, by work id): the session's own refusals for that apply. */
  namesLease?: boolean;
  annotations: ToolAnnotations;
  run(args: z.infer<z.ZodObject<S>>): Promise<unknown>;
}

/**
 * The tool's input as it is checked and listed: its properties and no other, as the board refuses a
 * body with unknown properties (a key misspelt is refused, not dropped).
 */
export const inputOf = (tool: Pick<ToolDef, 'input'>): z.ZodObject => z.strictObject(tool.input);

/** Keeps `run`'s argument typed by the tool's own input shape. */
export const defineTool = <S extends z.ZodRawShape>(tool: ToolDef<S>): ToolDef => tool as unknown as ToolDef;

export const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

/** `core` (default), `all`, or tool names separated by commas (core names included only when listed). */
export type ToolSelection = { tier: 'core' | 'all' } | { names: string[] };

/** Reads a selection as written in BOARD_MCP_TOOLS or `?tools=`; unknown names are refused. */
export function parseSelection(text: string | undefined, known: readonly string[]): ToolSelection {
  const value = (text ?? '').trim().toLowerCase();
  if (value === '' || value === 'core' || value === 'default') return { tier: 'core' };
  if (value === 'all') return { tier: 'all' };
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length)
    throw new Error(
      `unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: use core, all, or names from ${known.join(', ')}`,
    );
  return { names };
}

export function selectTools(tools: readonly ToolDef[], selection: ToolSelection): ToolDef[] {
  if ('names' in selection) return tools.filter((t) => selection.names.includes(t.name));
  return selection.tier === 'all' ? [...tools] : tools.filter((t) => t.tier === 'core');
}

/**
 * How a tool names a lease: by work id where the session keeps its leases (stdio), by the lease id
 * claim_work gave where it keeps nothing (HTTP). Typed with both keys optional: one is present.
 */
export function leaseRefShape(live: boolean): {
  workId: z.ZodOptional<z.ZodString>;
  leaseId: z.ZodOptional<z.ZodString>;
} {
  const shape = live
    ? {
        workId: z
          .string()
          .optional()
          .describe('The item whose lease you mean (W-12); may be left out while you hold only one lease.'),
      }
    : { leaseId: z.string().describe('The leaseId claim_work gave you.') };
  return shape as unknown as { workId: z.ZodOptional<z.ZodString>; leaseId: z.ZodOptional<z.ZodString> };
}
