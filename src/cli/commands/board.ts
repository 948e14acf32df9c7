// agent-board status, items add|list|show: reading the board and adding work to it.
import { Option, type Command } from 'commander';
import type { Reply } from '../../mcp/client.js';
import { cliOf } from '../context.js';
import { until, type Output } from '../output.js';
import { UsageError } from '../exit-codes.js';

type Item = Reply<'/api/items/{workId}', 'get'>;
type ListedItem = Reply<'/api/items', 'get'>['items'][number];

const list = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const integer = (value: string): number => {
  if (!/^-?\d+$/.test(value)) throw new UsageError(`not an integer: ${value}`);
  return Number(value);
};

const STATE_STYLE: Record<string, Parameters<Output['paint']>[0]> = {
  ready: 'green',
  claimed: 'yellow',
  verifying: 'yellow',
  awaiting_verify: 'magenta',
  done: 'gray',
  blocked: 'red',
  cancelled: 'gray',
  pending: 'blue',
};

function itemLine(out: Output, item: Pick<ListedItem, 'workId' | 'state' | 'priority' | 'title' | 'lease'>): string {
  const lease = item.lease
    ? out.paint('gray', ` (${item.lease.purpose} lease: ${item.lease.holder}, ends ${until(item.lease.expiresAt)})`)
    : '';
  return `${out.paint('bold', item.workId.padEnd(6))} ${out.paint(STATE_STYLE[item.state] ?? 'cyan', item.state.padEnd(15))} P${item.priority}  ${item.title}${lease}`;
}

export function boardCommands(program: Command): void {
  program
    .command('status')
    .description(
      'The board at a glance: counts by state, the head of the priority chain, leases, items awaiting verification',
    )
    .action(async (_options: unknown, command: Command) => {
      const { out, client, query } = await cliOf(command);
      const status = await client.get('/api/status', { params: { query } });
      out.result(status, (s) => [
        `${out.paint('bold', s.name)} (${s.projectId}), seq ${s.lastSeq}, ${s.agentsOnline} agent(s) online`,
        `items: ${
          Object.entries(s.counts)
            .filter(([, n]) => n > 0)
            .map(([state, n]) => `${out.paint(STATE_STYLE[state] ?? 'cyan', state)} ${n}`)
            .join(', ') || 'none'
        }`,
        `next up: ${s.chainHead.map((i) => `${i.workId} ${i.title}`).join(' · ') || 'nothing ready'}`,
        ...s.leases.map((l) => `lease: ${l.workId} ${l.purpose} by ${l.holder}, ends ${until(l.expiresAt)}`),
        ...(s.awaitingVerification.length ? [`awaiting verification: ${s.awaitingVerification.join(', ')}`] : []),
        ...(s.stalled.length ? [out.paint('red', `stalled: ${s.stalled.join(', ')}`)] : []),
      ]);
    });

  const items = program.command('items').description('Add, list and show items');
  items
    .command('add <title>')
    .description('Create an item')
    .option('-d, --description <text>', 'detail for whoever claims it')
    .option('-p, --priority <0-4>', 'urgency, 0 most urgent (default 2)', integer)
    .addOption(new Option('--type <type>', 'kind of work').choices(['task', 'bug', 'chore', 'epic']))
    .option('--verify', 'an independent agent must verify the submitted head')
    .option('--depends-on <workIds>', 'work ids that must be done first, comma separated', list)
    .option('--parent <workId>', 'the item this one belongs under')
    .option('--labels <labels>', 'comma separated', list)
    .action(
      async (
        title: string,
        o: {
          description?: string;
          priority?: number;
          type?: 'task' | 'bug' | 'chore' | 'epic';
          verify?: boolean;
          dependsOn?: string[];
          parent?: string;
          labels?: string[];
        },
        command: Command,
      ) => {
        const { out, client, query } = await cliOf(command);
        const item = await client.post('/api/items', {
          params: { query },
          body: {
            title,
            ...(o.description && { description: o.description }),
            ...(o.priority !== undefined && { priority: o.priority }),
            ...(o.type && { type: o.type }),
            ...(o.verify && { verify: 'required' as const }),
            ...(o.dependsOn && { dependsOn: o.dependsOn }),
            ...(o.parent && { parentId: o.parent }),
            ...(o.labels && { labels: o.labels }),
          },
        });
        out.result(item, (i) => `Created ${itemLine(out, i)}`);
      },
    );
  items
    .command('list')
    .description('List items, optionally in one state')
    .addOption(
      new Option('--state <state>').choices([
        'pending',
        'ready',
        'claimed',
        'awaiting_verify',
        'verifying',
        'done',
        'blocked',
        'cancelled',
      ]),
    )
    .option('--limit <n>', '1 to 1000 (default 200)')
    .option('--after <workId>', 'the `next` of the previous page')
    .action(async (o: { state?: 'ready'; limit?: string; after?: string }, command: Command) => {
      const { out, client, query } = await cliOf(command);
      const page = await client.get('/api/items', {
        params: {
          query: {
            ...query,
            ...(o.state && { state: o.state }),
            ...(o.limit && { limit: o.limit }),
            ...(o.after && { after: o.after }),
          },
        },
      });
      out.result(page, (p) => [
        ...(p.items.length ? p.items.map((i) => itemLine(out, i)) : ['no items']),
        ...(p.next ? [out.paint('gray', `more: --after ${p.next}`)] : []),
      ]);
    });
  items
    .command('show <workId>')
    .description('One item in full')
    .action(async (workId: string, _o: unknown, command: Command) => {
      const { out, client, query } = await cliOf(command);
      const item = await client.get('/api/items/{workId}', { params: { path: { workId }, query } });
      out.result(item, (i: Item) => [
        itemLine(out, i),
        ...(i.description ? ['', i.description, ''] : []),
        `verify: ${i.verify}   attempts: ${i.attempts}/${i.maxAttempts}   depends on: ${i.dependsOn.join(', ') || 'nothing'}`,
        ...(i.submission ? [`submitted: ${i.submission.head} by ${i.submission.by} at ${i.submission.at}`] : []),
        ...i.verifications.map((v) => `verified ${v.verdict} by ${v.by} on ${v.head}`),
        ...(i.progress ? [`progress: ${i.progress.note} (${i.progress.by})`] : []),
        ...(i.blockedReason ? [out.paint('red', `blocked: ${i.blockedReason}`)] : []),
      ]);
    });
}
