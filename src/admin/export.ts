// The operators' export (DOMAIN.md "Operators", Data): everything an account or a board holds, as
// newline-delimited JSON written as it is read from the store, page by page, with the secrets and
// hashes named in LEFT_OUT taken out. The first line says what the export is and what it leaves
// out; the last line (`end`) counts the lines, so a reader can tell a whole export from a cut one.
import type { BoardItem } from '../../machines/board.js';
import { compareClauseIds, splitStored, type StoredEntry } from '../../machines/board-entries.js';
import { AppError } from '../errors/app-error.js';
import type { Collection, Doc, EventRecord, Filter, Store } from '../../store/ports/store.js';
import { seqOf } from '../../machines/board-index.js';
import type { BoardStats } from '../../machines/board-stats.js';
import { statsSince } from '../board/metrics.js';

export const EXPORT_FORMAT = 1;
export const EXPORT_CONTENT_TYPE = 'application/x-ndjson; charset=utf-8';

/**
 * What an export never holds: these fields of the records it writes (dotted paths reach inside a
 * record), and these collections, never read. The redaction below is driven by this list alone,
 * and every export's first line repeats it.
 */
export const LEFT_OUT = {
  fields: {
    /** The password's bcrypt hash. */
    account: ['passwordHash'],
    /** The token's secret, hashed. */
    token: ['secretHash'],
    /** The invitation link's token, hashed. */
    invitation: ['tokenHash'],
    /** A lease id is its holder's capability (machines/item-view.ts); ended leases are only lease ids. */
    item: ['life.lease.leaseId', 'endedLeases'],
    /** The answer a blind test must give is never shown to anyone (an imported entry has none until an admin sets it again). */
    doctrine: ['life.expectedDigest'],
  },
  collections: {
    sessions: 'ids are hashes of session cookies',
    linkTokens: 'ids are hashes of mailed reset and confirmation links',
    enrollments: 'ids are hashes of enrollment codes',
    claimNonces: 'ids are hashes of claim nonces',
    deviceGrants: 'device and user codes, hashed',
    anonymousAccounts: 'claim secrets, hashed',
    mailOutbox: 'sealed mail (reset links are secrets)',
    restorePointParts: 'the graphs of restore points (their metadata is exported)',
    presence: 'who is online now (not history)',
    sharingMails: 'hashed addresses of the hourly mail budget',
    feedbackLedgers: 'the board’s open feedback, counted for its limits (the feedback entries are exported)',
  },
} as const;

type Kind = keyof typeof LEFT_OUT.fields;

export type ExportScope = { userId: string } | { projectId: string };

/** One line of an export. */
export type ExportLine =
  | {
      kind: 'export';
      format: number;
      scope: 'account' | 'board';
      id: string;
      exportedAt: string;
      leftOut: typeof LEFT_OUT;
    }
  | { kind: string; boardId?: string; record: Record<string, unknown> }
  | { kind: 'end'; lines: number };

/** Records read per store call, so memory holds one page, never a whole log. */
export const PAGE = 500;
/** Bytes per chunk written at most (a page may go out in several). */
const CHUNK_BYTES = 64 * 1024;

/** `record` without the dotted `paths`. */
export function without(record: object, paths: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...record };
  for (const path of paths) {
    const [head, ...rest] = path.split('.');
    if (!(head! in out)) continue;
    if (!rest.length) delete out[head!];
    else if (out[head!] !== null && typeof out[head!] === 'object')
      out[head!] = without(out[head!] as object, [rest.join('.')]);
  }
  return out;
}

const redact = (kind: Kind, record: object): Record<string, unknown> => without(record, LEFT_OUT.fields[kind]);

/**
 * Pages of `collection` matching `filter`, in order of `field` then id. Each page starts at the last
 * value of `field` seen and skips the records already read at it, so the read goes through the
 * index on `field` and never holds more than one page.
 */
async function* pages<T extends Doc>(
  collection: Collection<T>,
  filter: Filter<T>,
  field: keyof T & string,
): AsyncGenerator<T[]> {
  let last: unknown;
  let seenAtLast = 0;
  for (;;) {
    const from = last === undefined ? filter : ({ ...filter, [field]: { $gte: last } } as Filter<T>);
    const page = await collection.find(from, {
      sort:
        field === '_id'
          ? [['_id', 1]]
          : [
              [field, 1],
              ['_id', 1],
            ],
      skip: seenAtLast,
      limit: PAGE,
    });
    if (page.length) yield page;
    if (page.length < PAGE) return;
    for (const record of page) {
      if (record[field] === last) seenAtLast++;
      else [last, seenAtLast] = [record[field], 1];
    }
  }
}

async function* linesOf<T extends Doc>(
  source: AsyncIterable<T[]>,
  line: (record: T) => ExportLine | null,
): AsyncGenerator<ExportLine[]> {
  for await (const page of source) yield page.flatMap((r) => line(r) ?? []);
}

/** The item as exported: without its lease's id and its ended leases (LEFT_OUT.fields.item). */
export const exportedItem = (item: BoardItem): Record<string, unknown> => redact('item', item);

/** The board's event log up to the header's seq: the stored log, then the events of the last commit still in its outbox. */
async function* eventLines(
  store: Store,
  boardId: string,
  record: { lastSeq: number; outbox?: Omit<EventRecord, 'version'>[] },
): AsyncGenerator<ExportLine[]> {
  const held = (record.outbox ?? []).filter((e) => e.seq <= record.lastSeq);
  const end = held.length ? held[0]!.seq - 1 : record.lastSeq;
  const line = ({ seq, type, actor, workId, at, data }: Omit<EventRecord, 'version' | '_id'>): ExportLine => ({
    kind: 'event',
    boardId,
    record: { seq, type, actor, workId, at, data },
  });
  for (let after = 0; ;) {
    const page = await store.events.find(
      { boardId, seq: { $gt: after, $lte: end } },
      { sort: [['seq', 1]], limit: PAGE },
    );
    if (page.length) yield page.map(line);
    if (page.length < PAGE) break;
    after = page.at(-1)!.seq;
  }
  if (held.length) yield held.map(line);
}

interface Skip {
  /** An account export writes its own tokens and audit rows once, before its boards. */
  token(record: { accountId: string }): boolean;
  audit(record: { actor: string; target?: string | null }): boolean;
}

const NO_SKIP: Skip = { token: () => false, audit: () => false };

/** Everything one board holds: its project and header, items, doctrine entries, spec clauses, members, invitations, tokens, transfers, log, shouts, feedback, restore points, billing, audit. */
async function* boardLines(store: Store, projectId: string, skip: Skip): AsyncGenerator<ExportLine[]> {
  const [project, loaded] = await Promise.all([store.projects.get(projectId), store.boards.load(projectId)]);
  if (!project || !loaded) return;
  const { record } = loaded;
  const header = {
    nextWorkSeq: record.nextWorkSeq,
    nextFencingToken: record.nextFencingToken,
    lastSeq: record.lastSeq,
    nextDeadline: record.nextDeadline,
    counts: record.counts ?? {},
    stats: record.stats ? await statsSince(store, projectId, record.stats as unknown as BoardStats) : null,
  };
  yield [{ kind: 'board', boardId: projectId, record: { project, header } }];
  // The store keeps doctrine entries and spec clauses beside the items (machines/board-entries.ts): each kind has its own lines.
  const { items, doctrine, spec } = splitStored(loaded.items as StoredEntry[]);
  loaded.items.length = 0;
  items.sort((a, b) => seqOf(a.workId) - seqOf(b.workId));
  for (let i = 0; i < items.length; i += PAGE)
    yield items.slice(i, i + PAGE).map((item) => ({ kind: 'item', boardId: projectId, record: exportedItem(item) }));
  items.length = 0;
  doctrine.sort((a, b) => (a.slug < b.slug ? -1 : 1));
  for (let i = 0; i < doctrine.length; i += PAGE)
    yield doctrine
      .slice(i, i + PAGE)
      .map((entry) => ({ kind: 'doctrine', boardId: projectId, record: redact('doctrine', entry) }));
  spec.sort((a, b) => compareClauseIds(a.clauseId, b.clauseId));
  for (let i = 0; i < spec.length; i += PAGE)
    yield spec.slice(i, i + PAGE).map((clause) => ({ kind: 'spec', boardId: projectId, record: { ...clause } }));
  const of =
    (kind: string) =>
    (r: object): ExportLine => ({
      kind,
      boardId: projectId,
      record: kind in LEFT_OUT.fields ? redact(kind as Kind, r) : { ...r },
    });
  yield* linesOf(pages(store.members, { projectId }, 'acceptedAt'), of('member'));
  yield* linesOf(pages(store.invitations, { projectId }, 'createdAt'), of('invitation'));
  yield* linesOf(pages(store.tokens, { boardId: projectId }, '_id'), (t) => (skip.token(t) ? null : of('token')(t)));
  yield* linesOf(pages(store.transfers, { projectId }, '_id'), of('transfer'));
  yield* eventLines(store, projectId, record);
  yield* linesOf(pages(store.shouts, { boardId: projectId }, 'at'), of('shout'));
  yield* linesOf(pages(store.feedback, { boardId: projectId }, '_id'), of('feedback'));
  yield* linesOf(pages(store.restorePoints, { boardId: projectId }, 'seq'), of('restorePoint'));
  const billing = await store.billing.get(projectId);
  if (billing) yield [of('billing')(billing)];
  yield* linesOf(pages(store.billingEvents, { projectId }, 'at'), of('billingEvent'));
  yield* linesOf(pages(store.audit, { projectId }, 'at'), (a) => (skip.audit(a) ? null : of('audit')(a)));
}

/** An account: the account, its tokens, memberships, billing and audit rows, then each board it owns whole. */
async function* accountLines(store: Store, userId: string): AsyncGenerator<ExportLine[]> {
  const account = await store.accounts.get(userId);
  if (!account) return;
  const principal = `user:${userId}`;
  const target = `account:${userId}`;
  yield [{ kind: 'account', record: redact('account', account) }];
  const line =
    (kind: string) =>
    (r: object): ExportLine => ({ kind, record: kind in LEFT_OUT.fields ? redact(kind as Kind, r) : { ...r } });
  yield* linesOf(pages(store.tokens, { accountId: userId }, '_id'), line('token'));
  yield* linesOf(pages(store.members, { accountId: userId }, 'acceptedAt'), line('membership'));
  yield* linesOf(pages(store.billing, { accountId: userId }, '_id'), line('billing'));
  yield* linesOf(pages(store.audit, { actor: principal }, 'at'), line('audit'));
  yield* linesOf(pages(store.audit, { target }, 'at'), (a) => (a.actor === principal ? null : line('audit')(a)));
  const skip: Skip = {
    token: (t) => t.accountId === userId,
    audit: (a) => a.actor === principal || a.target === target,
  };
  for await (const owned of pages(store.projects, { ownerId: userId }, '_id'))
    for (const project of owned) yield* boardLines(store, project._id, skip);
}

/** Pages of lines as NDJSON text, at most CHUNK_BYTES a chunk (about), one chunk at least per page read. */
async function* ndjson(header: ExportLine, source: AsyncIterable<ExportLine[]>): AsyncGenerator<string> {
  let count = 1;
  let chunk = `${JSON.stringify(header)}\n`;
  for await (const page of source) {
    for (const line of page) {
      chunk += `${JSON.stringify(line)}\n`;
      count++;
      if (chunk.length >= CHUNK_BYTES) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
    chunk = '';
  }
  yield `${chunk}${JSON.stringify({ kind: 'end', lines: count + 1 })}\n`;
}

/**
 * The export of an account or a board, as chunks to stream. Refuses (404 NOT_FOUND) before any
 * byte is written when there is no such account or board.
 */
export async function exportOf(store: Store, scope: ExportScope, now: number): Promise<AsyncGenerator<string>> {
  const exportedAt = new Date(now).toISOString();
  if ('userId' in scope) {
    if (!(await store.accounts.versionOf(scope.userId))) throw new AppError('NOT_FOUND', 'No account has that id.');
    return ndjson(
      { kind: 'export', format: EXPORT_FORMAT, scope: 'account', id: scope.userId, exportedAt, leftOut: LEFT_OUT },
      accountLines(store, scope.userId),
    );
  }
  if (!(await store.projects.versionOf(scope.projectId))) throw new AppError('NOT_FOUND', 'No board has that id.');
  return ndjson(
    { kind: 'export', format: EXPORT_FORMAT, scope: 'board', id: scope.projectId, exportedAt, leftOut: LEFT_OUT },
    boardLines(store, scope.projectId, NO_SKIP),
  );
}
