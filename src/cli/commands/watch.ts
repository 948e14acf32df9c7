// agent-board watch: a live tail of the board's events (and shouts) over its socket, one line each,
// coloured on a terminal, a JSON object per line with --json. The socket resumes by seq through
// drops on its own; --since resumes a watch that was stopped (the last seq is said on exit).
import type { Command } from 'commander';
import { BoardSocket, type LoggedEvent, type Shout, type Topic } from '../../mcp/client.js';
import { cliOf } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';
import type { Output, Style } from '../output.js';

const TOPICS: Topic[] = ['items', 'leases', 'shouts', 'activity'];

function styleOf(type: string): Style {
  if (type === 'lease.expired' || type === 'lease.revoked' || type.endsWith('.blocked') || type.endsWith('.cancelled'))
    return 'red';
  if (type.startsWith('lease.')) return 'yellow';
  if (type.includes('verif') || type.endsWith('.submitted')) return 'magenta';
  if (type.startsWith('doctrine.') || type.startsWith('spec.')) return 'blue';
  return 'cyan';
}

/** A few words on what the event did, from its data. */
function gist(e: LoggedEvent['event']): string {
  const d = e.data as {
    item?: { state?: string; title?: string };
    lease?: { holder?: string; purpose?: string; expiresAt?: string };
    reason?: string;
    head?: string;
  };
  const parts = [
    d.item?.title && e.type === 'item.created' ? `“${d.item.title}”` : null,
    d.item?.state ? `→ ${d.item.state}` : null,
    d.lease?.holder ? `${d.lease.purpose ?? ''} lease of ${d.lease.holder}`.trim() : null,
    d.reason ? `(${d.reason})` : null,
  ];
  return parts.filter(Boolean).join(' ');
}

const time = (iso: string): string => iso.slice(11, 19);

export function eventLine(out: Output, e: LoggedEvent): string {
  const { event } = e;
  return `${out.paint('gray', `#${String(e.seq).padEnd(5)} ${time(event.at)}`)} ${out.paint(styleOf(event.type), event.type.padEnd(18))} ${(event.workId ?? '').padEnd(6)} ${out.paint('dim', event.actor)} ${gist(event)}`.trimEnd();
}

export function shoutLine(out: Output, s: Shout): string {
  const to = s.to ? ` → ${s.to}` : '';
  return `${out.paint('gray', `shout  ${time(s.at)}`)} ${out.paint('green', `${s.from}${to}`)}${s.workId ? ` (${s.workId})` : ''}: ${s.text}`;
}

export function watchCommand(program: Command): void {
  program
    .command('watch')
    .description('Follow the board live: every event (and shout) as it happens; Ctrl-C prints where to resume')
    .option('--since <seq>', 'start after this seq (the events after it are replayed first)')
    .option('--topics <topics>', `comma separated: ${TOPICS.join(', ')} (default activity: everything)`)
    .action(async (o: { since?: string; topics?: string }, command: Command) => {
      const cli = await cliOf(command);
      const { out } = cli;
      const since = o.since === undefined ? undefined : Number(o.since);
      if (since !== undefined && !(Number.isInteger(since) && since >= 0))
        throw new UsageError(`--since takes a seq (an integer of at least 0), not ${o.since}`);
      const topics = (o.topics?.split(',').map((t) => t.trim()) ?? ['activity']) as Topic[];
      const wrong = topics.filter((t) => !TOPICS.includes(t));
      if (wrong.length) throw new UsageError(`unknown topic ${wrong.join(', ')}: use ${TOPICS.join(', ')}`);
      const me = await cli.client.get('/api/whoami');
      const boardId = cli.conn.projectId ?? me.workspace?.projectId;
      if (!boardId) throw new UsageError('which board? pass --project <projectId> (an account token reaches several)');
      const socket = new BoardSocket({ baseUrl: cli.conn.baseUrl, token: cli.token, principal: me.principal });
      let last = since ?? null;
      socket.on('event', (e) => {
        if (e.boardId !== boardId) return;
        last = e.seq;
        out.line({ type: 'event', boardId: e.boardId, seq: e.seq, event: e.event }, eventLine(out, e));
      });
      socket.on(
        'shout',
        ({ boardId: on, shout }) =>
          void (on === boardId && out.line({ type: 'shout', boardId: on, shout }, shoutLine(out, shout))),
      );
      socket.on('resync', (r) =>
        out.note(`the log no longer reaches back to seq ${since}; watching from seq ${r.seq}`),
      );
      socket.on(
        'close',
        (c) =>
          void (
            c.reconnecting &&
            out.note(
              out.paint('gray', `connection lost (${c.code}); reconnecting and resuming after seq ${last ?? 0}…`),
            )
          ),
      );
      const ended = new Promise<number>((resolve) => {
        const stop = () => resolve(EXIT.ok);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        socket.on(
          'close',
          (c) =>
            void (
              !c.reconnecting &&
              c.code !== 1000 &&
              (out.note(`the board closed the connection: ${c.code} ${c.reason}`),
              resolve(c.code === 4001 ? EXIT.auth : EXIT.unavailable))
            ),
        );
        socket.on(
          'unsubscribed',
          (u) =>
            void (
              u.boardId === boardId &&
              (out.note(`the board ended the watch: ${u.reason ?? 'unsubscribed'}`), resolve(EXIT.auth))
            ),
        );
      });
      await socket.connect();
      const subscribed = await socket.subscribe(boardId, { topics, ...(since !== undefined && { since }) });
      last ??= subscribed.seq;
      out.note(out.paint('gray', `watching ${boardId} from seq ${since ?? subscribed.seq} (Ctrl-C to stop)`));
      const code = await ended;
      socket.close();
      out.note(`stopped after seq ${last}; resume with: agent-board watch --since ${last}`);
      process.exitCode = code;
    });
}
