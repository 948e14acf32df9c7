// Where the CLI keeps what `login` got and the leases `claim` took: one JSON file in the user's
// config directory ($XDG_CONFIG_HOME/agent-board, else ~/.config/agent-board), readable by its
// owner only (0600, in a 0700 folder), since it holds a Bearer token.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './exit-codes.js';
import { ANSWER_TIMEOUT_SECONDS } from './http-fetch.js';

export interface StoredLease {
  url: string;
  workId: string;
  purpose: 'work' | 'verify';
  leaseId: string;
  expiresAt: string;
}

export interface CliConfig {
  url?: string;
  token?: string;
  projectId?: string;
  principal?: string;
  name?: string;
  leases?: StoredLease[];
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'agent-board', 'config.json');
}

export async function readConfig(path = configPath()): Promise<CliConfig> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as CliConfig;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`cannot read ${path}: ${(e as Error).message}`);
  }
}

/** Replaces the file whole (a crash leaves the old one or the new one), owner-only. */
export async function writeConfig(config: CliConfig, path = configPath()): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600); // a umask cannot widen it
  await rename(temp, path);
}

/** Global options as commander gives them. */
export interface GlobalOptions {
  url?: string;
  token?: string;
  project?: string;
  json?: boolean;
  timeout?: string;
}

export interface Connection {
  baseUrl: string;
  token: string | undefined;
  projectId: string | undefined;
  config: CliConfig;
  /** How long each request waits for the board's whole answer. */
  timeoutSeconds: number;
}

/** Flags first, then BOARD_URL / BOARD_TOKEN / BOARD_PROJECT, then what `login` stored. */
export async function connection(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const config = await readConfig(configPath(env));
  const baseUrl = options.url ?? env.BOARD_URL ?? config.url;
  if (!baseUrl)
    throw new UsageError('no board address: pass --url, set BOARD_URL, or run `agent-board login --url <board>` once');
  const sameBoard = !options.url && !env.BOARD_URL ? true : trim(baseUrl) === trim(config.url ?? '');
  return {
    baseUrl: trim(baseUrl),
    token: options.token ?? env.BOARD_TOKEN ?? (sameBoard ? config.token : undefined),
    projectId:
      options.project ??
      env.BOARD_PROJECT ??
      (sameBoard && !options.token && !env.BOARD_TOKEN ? config.projectId : undefined),
    config,
    timeoutSeconds: answerTimeout(options, env),
  };
}

/** How long each request waits for the board's answer: --timeout, else BOARD_TIMEOUT_SECONDS, else 30 s. */
export function answerTimeout(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): number {
  const given = options.timeout ?? env.BOARD_TIMEOUT_SECONDS;
  if (given === undefined) return ANSWER_TIMEOUT_SECONDS;
  if (!/^\d+(\.\d+)?$/.test(given) || Number(given) <= 0)
    throw new UsageError(`the time-out is a number of seconds above 0, not ${given}`);
  return Number(given);
}

/**
 * Why a connection has no token, and how to get one: a login stored for another board is named,
 * since the token `login` stored is only ever sent to the board it came from. `where` says where
 * a token may be set besides (the MCP server's environment, say).
 */
export function noTokenMessage(conn: Connection, where = 'set BOARD_TOKEN (or pass --token)'): string {
  const stored = conn.config.token && conn.config.url ? trim(conn.config.url) : null;
  if (stored && stored !== conn.baseUrl)
    return `no board token for ${conn.baseUrl}: the stored login is for ${stored}. Run \`agent-board login --url ${conn.baseUrl}\` to log in to ${conn.baseUrl} (it replaces the stored login), or ${where}`;
  return `no board token: run \`agent-board login\`, or ${where}`;
}

const trim = (url: string): string => url.replace(/\/+$/, '');
