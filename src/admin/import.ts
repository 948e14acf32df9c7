// The operators' import (DOMAIN.md "Operators", Data): the lines of one board's export become a new
// board of an account, within its plan's board limit. New board id, the same items and graph (work
// ids kept), the same doctrine entries (with no expected blind-test digest: an export never holds
// one) and spec clauses, the event log kept as history (each event marked `imported`, then one board.imported
// event), and none of the old credentials: no tokens, invitations or members besides the new owner,
// and no live lease (a lease's id is its holder's capability and never leaves the old board, so an
// item held then is as its lease would leave it: claimed counts as ready, verifying as awaiting_verify).
// Until its header is committed the new board is no one's (ProjectRecord.importing): an import cut
// short (a node that dies, a clean-up that fails) leaves nothing anyone sees, and sweepImports
// removes it with whatever events it wrote. A retry of an import (its answer lost) answers the board
// the first one made (importKey).
import { z } from 'zod';
import { boardFrom, entryCount, type BoardItem } from '../../machines/board.js';
import { checkGraph } from '../../machines/board-graph.js';
import { nextExpiry } from '../../machines/board-queries.js';
import {
  clauseKey,
  doctrineKey,
  SPEC_STATUSES,
  type DoctrineEntry,
  type SpecClause,
} from '../../machines/board-entries.js';
import { DOCTRINE_LEVELS, DOCTRINE_STATUSES } from '../../machines/doctrine-machine.js';
import type { BoardStats } from '../../machines/board-stats.js';
import { seqOf } from '../../machines/board-index.js';
import { ITEM_STATES } from '../../machines/item-types.js';
import { checkProjectName, deleteProject, ensureRoom, openImported, provisionProject } from '../accounts/projects.js';
import { withAccountLock } from '../accounts/account-lock.js';
import { AppError } from '../errors/app-error.js';
import { SLUG } from '../board/doctrine.js';
import { CommitId, Digest, IssuedWorkId } from '../board/schemas.js';
import { eventId, type EventRecord, type ProjectRecord, type Store } from '../../store/ports/store.js';
import { EXPORT_FORMAT } from './export.js';

/** What one import may carry at most: the body (64 MiB) and its lines. */
export const IMPORT_BODY_LIMIT = 64 * 1024 * 1024;
export const IMPORT_ITEMS_MAX = 50_000;
export const IMPORT_EVENTS_MAX = 250_000;
export const IMPORT_LINES_MAX = 400_000;
/**
 * What one event's data may be (every other field of a line has a schema of its own). The board's
 * own events nest a few levels (data.item.life.verifications[i].by) and hold at most one item's
 * patch or a reorder's patches of 500 items, well under both bounds. Past them nothing is stored:
 * the store encodes a record recursively (20,000 levels overflowed its stack: a 500), and a socket
 * replaying the log is cut off past its 1 MiB backlog (src/server.ts), so a larger event could
 * never be sent to anyone.
 */
export const IMPORT_DATA_DEPTH_MAX = 32;
export const IMPORT_EVENT_DATA_BYTES_MAX = 1024 * 1024;
const EVENTS_PER_WRITE = 1000;
/** An import still unfinished this long after it began was cut short: its board is swept. */
export const IMPORT_STALE_MS = 3_600_000;

const Id = z.string().min(1).max(100);
const Principal = z.string().min(1).max(200);
const Time = z.number().int().min(0).max(8.64e15);
const Count = z.number().int().min(0).max(1e9);
const Text = (max: number) => z.string().max(max);
const ShortList = <T extends z.ZodType>(of: T, max: number) => z.array(of).max(max);
const Bounded = <T extends z.ZodType>(of: T, max: number, what: string) =>
  z.record(z.string().max(200), of).refine((r) => Object.keys(r).length <= max, `at most ${max} ${what}`);

const Lease = z.strictObject({
  holder: Principal,
  purpose: z.enum(['work', 'verify']),
  fencingToken: Count,
  grantedAt: Time,
  expiresAt: Time,
  hardExpiresAt: Time,
  ttlMs: Count,
});
const Life = z.strictObject({
  verify: z.enum(['none', 'required']),
  attempts: Count,
  maxAttempts: z.number().int().min(1).max(20),
  lease: Lease.nullable(),
  submission: z.strictObject({ head: CommitId, by: Principal, at: Time, supersedes: CommitId.optional() }).nullable(),
  verifications: ShortList(
    z.strictObject({
      by: Principal,
      head: CommitId,
      verdict: z.enum(['pass', 'fail']),
      finding: Digest.nullable(),
      at: Time,
      evidence: ShortList(Digest, 20).optional(),
    }),
    1000,
  ),
  workHolders: ShortList(Principal, 1000),
  finding: Digest.nullable(),
  overridden: z.strictObject({ by: Principal, reason: Text(500), at: Time }).nullable(),
  blockedReason: Text(500).nullable(),
});

/** An item as an export holds it (src/admin/export.ts: no lease id, no ended leases). */
const Item = z.strictObject({
  workId: IssuedWorkId,
  title: z.string().min(1).max(200),
  description: Text(4000),
  type: z.enum(['task', 'bug', 'chore', 'epic']),
  priority: z.number().int().min(0).max(4),
  rank: z.number().min(-1e15).max(1e15).nullable(),
  parentId: IssuedWorkId.nullable(),
  dependsOn: ShortList(IssuedWorkId, 100),
  verify: z.enum(['none', 'required']),
  maxAttempts: z.number().int().min(1).max(20),
  criteria: ShortList(Digest, 50),
  doctrine: ShortList(Text(64), 20),
  spec: ShortList(z.string().min(1).max(64), 20),
  labels: ShortList(Text(40), 20),
  state: z.enum(ITEM_STATES),
  life: Life,
  progress: z.strictObject({ note: Text(2000), by: Principal, at: Time }).nullable(),
  createdAt: Time,
  updatedAt: Time,
  // MongoDB keeps an item's undefined readyAt (never ready yet) as null: read either as unknown.
  readyAt: Time.nullish().transform((at) => at ?? undefined),
  version: z.number().int().min(1).max(1e12),
});

const Slug = z.string().regex(SLUG);
const ClauseId = z.string().regex(/^S-[1-9]\d{0,8}$/);

/** A doctrine entry as an export holds it (src/admin/export.ts: no expected digest). */
const Doctrine = z
  .strictObject({
    workId: z.string().max(80),
    slug: Slug,
    title: z.string().min(1).max(200),
    text: z.string().min(1).max(4000),
    status: z.enum(DOCTRINE_STATUSES),
    life: z.strictObject({
      level: z.enum(DOCTRINE_LEVELS),
      agreements: ShortList(z.strictObject({ by: Principal, at: Time }), 100_000),
      blindTests: z.strictObject({
        pass: Count,
        fail: Count,
        recent: ShortList(z.strictObject({ by: Principal, result: z.enum(['pass', 'fail']), at: Time }), 20),
      }),
      rejectedReason: Text(500).nullable(),
    }),
    proposedBy: Principal,
    createdAt: Time,
    updatedAt: Time,
    version: z.number().int().min(1).max(1e12),
  })
  .refine((e) => e.workId === doctrineKey(e.slug), 'workId must be doctrine:<slug>');

const Clause = z
  .strictObject({
    workId: z.string().max(80),
    clauseId: ClauseId,
    title: z.string().min(1).max(200),
    text: z.string().min(1).max(4000),
    status: z.enum(SPEC_STATUSES),
    createdBy: Principal,
    updatedBy: Principal,
    createdAt: Time,
    updatedAt: Time,
    version: z.number().int().min(1).max(1e12),
  })
  .refine((c) => c.workId === clauseKey(c.clauseId), 'workId must be spec:<clauseId>');

const Event = z.strictObject({
  seq: z.number().int().min(1).max(1e12),
  type: z.string().regex(/^[a-z][\w.-]{0,63}$/),
  actor: Principal,
  workId: IssuedWorkId.nullable(),
  at: Time,
  data: z.record(z.string().max(200), z.unknown()),
});

const DayStats = z.strictObject({
  done: Count,
  grants: Count,
  expiries: Count,
  verdicts: Count,
  passes: Count,
  readyToDone: Bounded(Count, 400, 'buckets'),
  blindPasses: Count.optional(),
  blindFails: Count.optional(),
  counts: Bounded(Count, 20, 'states').optional(),
  agentsPeak: Count.optional(),
});
const Stats = z.strictObject({ days: Bounded(DayStats, 1000, 'days'), active: Bounded(Time, 100_000, 'agents') });

const BoardLine = z.strictObject({
  kind: z.literal('board'),
  boardId: Id,
  record: z.object({
    project: z.object({ name: Text(200) }),
    header: z.object({
      nextWorkSeq: z.number().int().min(1).max(1e9),
      nextFencingToken: z.number().int().min(1).max(1e12),
      lastSeq: z.number().int().min(0).max(1e12),
      stats: Stats.nullable(),
    }),
  }),
});

/** Lines this import does not take: read past (the kinds an export writes beside a board's graph and log). */
const OTHER_KINDS = [
  'account',
  'membership',
  'member',
  'invitation',
  'token',
  'transfer',
  'shout',
  'feedback',
  'restorePoint',
  'billing',
  'billingEvent',
  'audit',
] as const;

const ExportLine = z.strictObject({
  kind: z.literal('export'),
  format: z.literal(EXPORT_FORMAT),
  scope: z.enum(['account', 'board']),
  id: Id,
  exportedAt: z.string().max(40),
  leftOut: z.unknown(),
});

const Line = z.discriminatedUnion('kind', [
  ExportLine,
  BoardLine,
  z.strictObject({ kind: z.literal('item'), boardId: Id, record: Item }),
  z.strictObject({ kind: z.literal('event'), boardId: Id, record: Event }),
  z.strictObject({ kind: z.literal('doctrine'), boardId: Id, record: Doctrine }),
  z.strictObject({ kind: z.literal('spec'), boardId: Id, record: Clause }),
  z.strictObject({
    kind: z.enum(OTHER_KINDS),
    boardId: Id.optional(),
    record: z.record(z.string().max(200), z.unknown()),
  }),
  z.strictObject({ kind: z.literal('end'), lines: z.number().int().min(3).max(IMPORT_LINES_MAX) }),
]);

export const ImportInput = z.strictObject({
  userId: Id,
  /** The new board's name; the exported board's name by default. */
  name: z.string().max(200).optional(),
  lines: z.array(Line).min(3).max(IMPORT_LINES_MAX),
});
export type ImportInput = z.infer<typeof ImportInput>;

type ExportedItem = z.infer<typeof Item>;
type ExportedEvent = z.infer<typeof Event>;
type ExportedDoctrine = z.infer<typeof Doctrine>;
type ExportedClause = z.infer<typeof Clause>;

export interface ImportedBoard {
  projectId: string;
  name: string;
  from: string;
  items: number;
  events: number;
  /** Lines read past, by kind (what the export holds beside the graph and the log). */
  skipped: Record<string, number>;
}

const invalid = (message: string, details?: Record<string, unknown>) => new AppError('INVALID_INPUT', message, details);

/** Why a value is past the data bounds, or null. Its depth is measured without recursion, so any depth is safe to look at. */
function dataProblem(data: unknown): string | null {
  const open: [unknown, number][] = [[data, 1]];
  for (let next = open.pop(); next; next = open.pop()) {
    const [value, depth] = next;
    if (value === null || typeof value !== 'object') continue;
    if (depth > IMPORT_DATA_DEPTH_MAX)
      return `is nested deeper than ${IMPORT_DATA_DEPTH_MAX} levels of objects and arrays`;
    for (const child of Object.values(value)) open.push([child, depth + 1]);
  }
  const bytes = Buffer.byteLength(JSON.stringify(data));
  return bytes > IMPORT_EVENT_DATA_BYTES_MAX
    ? `is larger than ${IMPORT_EVENT_DATA_BYTES_MAX} bytes as JSON (${bytes})`
    : null;
}

/** The export's board, items and events, after the checks that make it one whole board. */
function readExport(lines: ImportInput['lines']) {
  const [first, last] = [lines[0]!, lines.at(-1)!];
  if (first.kind !== 'export')
    throw invalid('The first line must be the export’s own (kind "export").', { field: 'body.lines.0' });
  const source = first as z.infer<typeof ExportLine>;
  if (last.kind !== 'end' || !('lines' in last) || last.lines !== lines.length)
    throw invalid('The export is not whole: its last line (kind "end") must count every line given.', {
      field: `body.lines.${lines.length - 1}`,
    });
  const boards = lines.filter((l) => l.kind === 'board');
  if (boards.length !== 1) throw invalid(`An import takes the export of one board; this holds ${boards.length}.`);
  const board = boards[0] as z.infer<typeof BoardLine>;
  const items: ExportedItem[] = [];
  const events: ExportedEvent[] = [];
  const doctrine: ExportedDoctrine[] = [];
  const spec: ExportedClause[] = [];
  const skipped: Record<string, number> = {};
  lines.forEach((line, i) => {
    if (line.kind === 'item' || line.kind === 'event' || line.kind === 'doctrine' || line.kind === 'spec') {
      if ((line as { boardId: string }).boardId !== board.boardId)
        throw invalid('An import takes the export of one board; this line is of another.', {
          field: `body.lines.${i}`,
        });
      if (line.kind === 'item') items.push((line as { record: ExportedItem }).record);
      else if (line.kind === 'doctrine') doctrine.push((line as { record: ExportedDoctrine }).record);
      else if (line.kind === 'spec') spec.push((line as { record: ExportedClause }).record);
      else {
        const event = (line as { record: ExportedEvent }).record;
        const problem = dataProblem(event.data);
        if (problem)
          throw invalid(`Line ${i} (event ${event.seq}): its data ${problem}.`, {
            field: `body.lines.${i}.record.data`,
          });
        events.push(event);
      }
    } else if (line.kind !== 'board' && line.kind !== 'export' && line.kind !== 'end')
      skipped[line.kind] = (skipped[line.kind] ?? 0) + 1;
  });
  if (items.length > IMPORT_ITEMS_MAX) throw invalid(`An import takes ${IMPORT_ITEMS_MAX} items at most.`);
  if (events.length > IMPORT_EVENTS_MAX) throw invalid(`An import takes ${IMPORT_EVENTS_MAX} events at most.`);
  if (new Set(items.map((i) => i.workId)).size !== items.length) throw invalid('Two items have one work id.');
  const slugs = new Set(doctrine.map((e) => e.slug));
  if (slugs.size !== doctrine.length) throw invalid('Two doctrine entries have one slug.');
  // As an item's doctrine links are made (DOCTRINE_LINK_NOT_FOUND): each names an entry of the board.
  for (const item of items) {
    const missing = item.doctrine.find((slug) => !slugs.has(slug));
    if (missing !== undefined)
      throw invalid(`Item ${item.workId} links doctrine entry "${missing}", which the export does not hold.`, {
        workId: item.workId,
        slug: missing,
      });
  }
  // Clause ids are assigned S-1, S-2, … and never deleted: the next one is S-<count + 1>.
  const clauseIds = spec.map((c) => c.clauseId).sort((a, b) => Number(a.slice(2)) - Number(b.slice(2)));
  if (clauseIds.some((id, i) => id !== `S-${i + 1}`)) throw invalid('Spec clauses must be S-1 to S-<n>, each once.');
  const { header } = board.record;
  for (let i = 0; i < events.length; i++) {
    if (i > 0 && events[i]!.seq <= events[i - 1]!.seq)
      throw invalid('Events must come in increasing seq order, each once.');
    if (events[i]!.seq > header.lastSeq)
      throw invalid(`Event ${events[i]!.seq} comes after the board's last seq (${header.lastSeq}).`);
  }
  return { source, board, items, events, doctrine, spec, skipped };
}

/** One import of one export into one account: what a retry of it repeats. */
const importKey = (userId: string, source: { id: string; exportedAt: string }, lastSeq: number): string =>
  JSON.stringify([userId, source.id, source.exportedAt, lastSeq]);

/** A board item from an exported one, as its lease would leave it: no lease survives the move. */
function itemFrom(e: ExportedItem): BoardItem {
  const state = e.state === 'claimed' ? 'ready' : e.state === 'verifying' ? 'awaiting_verify' : e.state;
  const workHolders = e.state === 'claimed' ? [] : e.life.workHolders;
  return { ...e, state, life: { ...e.life, lease: null, workHolders }, endedLeases: [] };
}

/** The graph rules (DOMAIN.md "Items") over the whole imported graph, as any new item meets them. */
function checkItems(items: BoardItem[]): void {
  let problem: ReturnType<typeof checkGraph>;
  try {
    problem = checkGraph(boardFrom([], 1, 1), Object.fromEntries(items.map((i) => [i.workId, i])));
  } catch (e) {
    if (e instanceof RangeError) throw invalid('The dependencies run too deep to check.');
    throw e;
  }
  if (problem) throw new AppError(problem.code, problem.message);
}

/**
 * Imports the export `input.lines` into `input.userId` as a new board. The account's board limit
 * holds (403 FREE_PROJECT_LIMIT), checked with the new board made under the account's lock; the
 * rest is written after, and a failure on the way deletes the new board again. The same export
 * imported into the account again (a retry whose first answer was lost) answers the board the
 * first import made, or, when that one never committed, makes it again in its place.
 */
export async function importBoard(
  store: Store,
  input: ImportInput,
  operator: string,
  now: number,
): Promise<ImportedBoard> {
  const { source, board, items: exported, events, doctrine, spec, skipped } = readExport(input.lines);
  const name = checkProjectName(input.name ?? board.record.project.name);
  const items = exported.map(itemFrom).sort((a, b) => seqOf(a.workId) - seqOf(b.workId));
  checkItems(items);
  const account = await store.accounts.get(input.userId);
  if (!account) throw new AppError('NOT_FOUND', 'No account has that id.');
  if (account.deletedAt)
    throw new AppError('ACCOUNT_DELETED', 'The account is deleted; restore it before importing into it.');
  const { header } = board.record;
  const nextWorkSeq = items.reduce((next, i) => Math.max(next, seqOf(i.workId) + 1), header.nextWorkSeq);
  const entries = [
    ...doctrine.map((e): DoctrineEntry => ({ ...e, life: { ...e.life, expectedDigest: null } })),
    ...spec.map((c): SpecClause => c),
  ];
  const built = boardFrom([...items, ...entries], nextWorkSeq, header.nextFencingToken);
  const key = importKey(input.userId, source, header.lastSeq);
  const answer = (project: Pick<ProjectRecord, '_id' | 'name'>): ImportedBoard => {
    const counts = { items: items.length, events: events.length, skipped };
    return { projectId: project._id, name: project.name, from: board.boardId, ...counts };
  };
  const made = await withAccountLock(store, input.userId, async () => {
    const [before] = await store.projects.find({ ownerId: input.userId, importKey: key }, { limit: 1 });
    if (before && before.importing == null) return { project: before, repeated: true };
    // One not committed was cut short (or is racing this one, whose board then wins): this one makes it again.
    if (before) await deleteProject(store, before._id);
    await ensureRoom(store, input.userId);
    return { project: await provisionProject(store, input.userId, name, now, key), repeated: false };
  });
  if (made.repeated) return answer(made.project);
  const boardId = made.project._id;
  try {
    for (let i = 0; i < events.length; i += EVENTS_PER_WRITE) {
      const chunk = events.slice(i, i + EVENTS_PER_WRITE);
      await store.events.insertMissing(
        chunk.map((e): EventRecord => ({
          _id: eventId(boardId, e.seq),
          version: 1,
          boardId,
          ...e,
          data: { ...e.data, imported: true },
        })),
      );
    }
    const seq = header.lastSeq + 1;
    const marker = {
      _id: eventId(boardId, seq),
      boardId,
      seq,
      type: 'board.imported',
      actor: operator,
      workId: null,
      at: now,
      data: { from: board.boardId, items: items.length, events: events.length },
    };
    const set = {
      nextWorkSeq,
      nextFencingToken: header.nextFencingToken,
      lastSeq: seq,
      nextDeadline: nextExpiry(built),
      outbox: [marker],
      counts: { ...built.index.counts },
      entries: entryCount(built),
      ...(header.stats && { stats: header.stats as BoardStats as unknown as Record<string, unknown> }),
    };
    if (!(await store.boards.commit(boardId, 1, set, { put: [...items, ...entries], removed: [] })))
      throw new AppError('BOARD_BUSY', 'The new board changed while it was imported; import again.', undefined, {
        'retry-after': '1',
      });
    await store.events.insertMissing([{ ...marker, version: 1 }]);
    await openImported(store, boardId, input.userId, now);
  } catch (e) {
    await deleteProject(store, boardId);
    throw e;
  }
  return answer(made.project);
}

/** Deletes the boards of imports cut short (their mark older than IMPORT_STALE_MS); answers their ids. */
export async function sweepImports(store: Store, now: number): Promise<string[]> {
  const stale = await store.projects.select({ importing: { $gte: 0, $lte: now - IMPORT_STALE_MS } }, ['_id']);
  for (const { _id } of stale) await deleteProject(store, _id);
  return stale.map((p) => p._id);
}
