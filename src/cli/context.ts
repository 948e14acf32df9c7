// What every command starts from: the output mode, the board's address and credential, and a
// typed client for them.
import type { Command } from 'commander';
import { BoardClient } from '../mcp/client.js';
import { fetchWithin } from './http-fetch.js';
import { connection, noTokenMessage, type Connection, type GlobalOptions } from './config.js';
import { AuthError } from './exit-codes.js';
import { Output } from './output.js';

export interface Cli {
  out: Output;
  conn: Connection;
  client: BoardClient;
  /** The project selection every board call carries. */
  query: { projectId?: string };
  token: string;
}

export const outputOf = (command: Command): Output =>
  new Output(Boolean((command.optsWithGlobals() as GlobalOptions).json));

/** The command's context; refuses (exit 3) when no token is configured. */
export async function cliOf(command: Command): Promise<Cli> {
  const options = command.optsWithGlobals() as GlobalOptions;
  const conn = await connection(options);
  if (!conn.token) throw new AuthError(noTokenMessage(conn));
  return {
    out: outputOf(command),
    conn,
    client: new BoardClient({ baseUrl: conn.baseUrl, token: conn.token, fetch: fetchWithin(conn.timeoutSeconds) }),
    query: conn.projectId ? { projectId: conn.projectId } : {},
    token: conn.token,
  };
}
