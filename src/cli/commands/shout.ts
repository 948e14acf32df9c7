// agent-board shout: a coordination message to the board, about an item, or to one agent.
import { Option, type Command } from 'commander';
import { cliOf } from '../context.js';

export function shoutCommand(program: Command): void {
  program
    .command('shout <text...>')
    .description('Shout to the board: broadcast, about an item (--work), or to one principal (--to)')
    .option('--to <principal>', 'agent:<id> or user:<id>, for a direct shout')
    .option('--work <workId>', 'the item it is about')
    .addOption(new Option('--kind <kind>').choices(['info', 'warn', 'request', 'handoff']))
    .action(
      async (
        words: string[],
        o: { to?: string; work?: string; kind?: 'info' | 'warn' | 'request' | 'handoff' },
        command: Command,
      ) => {
        const { out, client, query } = await cliOf(command);
        const shout = await client.post('/api/shouts', {
          params: { query },
          body: {
            text: words.join(' '),
            ...(o.to && { to: o.to }),
            ...(o.work && { workId: o.work }),
            ...(o.kind && { kind: o.kind }),
          },
        });
        out.result(
          shout,
          (s) => `Shouted${s.to ? ` to ${s.to}` : ''}${s.workId ? ` about ${s.workId}` : ''} (${s.id}).`,
        );
      },
    );
}
