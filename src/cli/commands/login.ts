// agent-board login: the device flow (RFC 8628). It shows the person a code and the page to approve
// it on, polls at the interval the board gives (slower after SLOW_DOWN), and stores the workspace
// token it receives in the config file (0600). The secret is never printed.
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { BoardApiError, BoardClient } from '../../mcp/client.js';
import { answerTimeout, configPath, readConfig, writeConfig, type GlobalOptions } from '../config.js';
import { UsageError } from '../exit-codes.js';
import { outputOf } from '../context.js';
import { fetchWithin } from '../http-fetch.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function loginCommands(program: Command): void {
  program
    .command('login')
    .description(
      'Get a token for this terminal through the device flow: a person approves the code on the board, and the token is stored in your config (0600)',
    )
    .option('--name <name>', 'the agent name the token is issued to', `${hostname()}-cli`.slice(0, 80))
    .action(async (options: { name: string }, command: Command) => {
      const global = command.optsWithGlobals() as GlobalOptions;
      const out = outputOf(command);
      const path = configPath();
      const config = await readConfig(path);
      const baseUrl = (global.url ?? process.env.BOARD_URL ?? config.url)?.replace(/\/+$/, '');
      if (!baseUrl) throw new UsageError('which board? pass --url https://your.board (or set BOARD_URL)');
      const board = new BoardClient({ baseUrl, fetch: fetchWithin(answerTimeout(global)) });
      const start = await board.post('/api/auth/device/start', {
        body: { clientName: options.name, ...(global.project && { projectId: global.project }) },
      });
      if (out.json)
        out.note(
          JSON.stringify({
            userCode: start.userCode,
            verificationUri: start.verificationUri,
            verificationUriComplete: start.verificationUriComplete,
            interval: start.interval,
            expiresIn: start.expiresIn,
          }),
        );
      else {
        out.note(
          `To let this terminal work on a board, open\n\n  ${out.paint('cyan', start.verificationUriComplete)}\n\nsigned in as an admin or owner of the board, and approve the code\n\n  ${out.paint('bold', start.userCode)}\n`,
        );
        out.note(
          out.paint('gray', `Waiting for approval (the code expires in ${Math.round(start.expiresIn / 60)} minutes)…`),
        );
      }
      let interval = start.interval;
      for (;;) {
        await sleep(interval * 1000);
        try {
          const granted = await board.post('/api/auth/device/poll', { body: { deviceCode: start.deviceCode } });
          const principal = `agent:${granted.token.agentId}`;
          await writeConfig(
            {
              ...config,
              url: baseUrl,
              token: granted.secret,
              projectId: granted.token.projectId ?? undefined,
              principal,
              name: granted.token.name,
            },
            path,
          );
          const result = {
            principal,
            name: granted.token.name,
            projectId: granted.token.projectId,
            role: granted.token.role,
            tokenPrefix: granted.token.prefix,
            config: path,
          };
          return out.result(
            result,
            (r) =>
              `Logged in as ${out.paint('bold', r.principal)} (${r.name}) on board ${r.projectId}, role ${r.role}. The token is stored in ${r.config}.`,
          );
        } catch (error) {
          if (!(error instanceof BoardApiError)) throw error;
          if (error.code === 'AUTHORIZATION_PENDING') continue;
          if (error.code === 'SLOW_DOWN') {
            const asked = Number(error.details?.interval);
            interval = Number.isFinite(asked) && asked > interval ? asked : interval + 5;
            continue;
          }
          throw error; // ACCESS_DENIED, EXPIRED_TOKEN, INVALID_DEVICE_CODE: start over
        }
      }
    });

  program
    .command('logout')
    .description('Forget the stored token (it stays valid on the board until revoked: agent-board tokens revoke)')
    .action(async (_options: unknown, command: Command) => {
      const out = outputOf(command);
      const path = configPath();
      const { token: _token, principal, ...rest } = await readConfig(path);
      await writeConfig({ ...rest, leases: [] }, path);
      out.result({ loggedOut: principal ?? null, config: path }, (r) =>
        r.loggedOut ? `Forgot the token of ${r.loggedOut}.` : 'No token was stored.',
      );
    });
}
