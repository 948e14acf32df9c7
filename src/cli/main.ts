// The agent-board command line (bin/agent-board.js runs it): a person's or a script's way onto a
// board, and `agent-board mcp` for an agent. Exit codes follow the class of the error (exit-codes.ts).
import { Command, CommanderError } from 'commander';
import { SERVER_VERSION } from '../mcp/server-identity.js';
import { boardCommands } from './commands/board.js';
import { leaseCommands } from './commands/lease.js';
import { loginCommands } from './commands/login.js';
import { mcpCommand } from './commands/mcp.js';
import { shoutCommand } from './commands/shout.js';
import { tokenCommands } from './commands/tokens.js';
import { watchCommand } from './commands/watch.js';
import { EXIT, exitCodeOf } from './exit-codes.js';
import { Output } from './output.js';

export function program(): Command {
  const cli = new Command('agent-board')
    .description('Work an agent board from a terminal, or serve it to an agent over MCP (agent-board mcp).')
    .version(SERVER_VERSION)
    .option('--url <url>', 'the board’s address (default: BOARD_URL, else the one you logged in to)')
    .option('--token <token>', 'a service token (default: BOARD_TOKEN, else the one login stored)')
    .option('--project <projectId>', 'the board, for a token that reaches several (default: BOARD_PROJECT)')
    .option('--json', 'print the board’s answers as JSON (errors as JSON on stderr)')
    .option(
      '--timeout <seconds>',
      'how long each request waits for the board’s answer before exit 6 (default: BOARD_TIMEOUT_SECONDS, else 30)',
    )
    .showHelpAfterError()
    .exitOverride();
  for (const add of [
    loginCommands,
    boardCommands,
    leaseCommands,
    shoutCommand,
    watchCommand,
    tokenCommands,
    mcpCommand,
  ])
    add(cli);
  // Every subcommand shares the exit override, so a usage error becomes exit 2 below.
  cli.commands.forEach(function override(c: Command): void {
    c.exitOverride();
    c.commands.forEach(override);
  });
  return cli;
}

const flushed = (stream: NodeJS.WriteStream): Promise<void> =>
  new Promise((resolve) => stream.write('', () => resolve()));

export async function main(argv: string[]): Promise<void> {
  const cli = program();
  try {
    await cli.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has said what was wrong (or shown the help or the version).
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    new Output(argv.includes('--json')).failure(error);
    process.exitCode = exitCodeOf(error);
  }
}

await main(process.argv);
// A command is done when its action is (mcp and watch wait for their end inside theirs): the process
// ends once its output is written, whatever handles are left (a kept-alive connection, a closed
// session's socket still closing).
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit();
