// Doctrine entries and spec clauses: board state beside the items, kept in the same per-entry
// storage. Every stored entry carries its store key in `workId` (the boards port reads only that):
// a work id `W-<n>` for an item, `doctrine:<slug>` for a doctrine entry, `spec:S-<n>` for a clause.
import type { BoardItem } from './board-item.js';
import type { DoctrineLife, DoctrineStatus } from './doctrine-machine.js';
import { iso } from './item-view.js';

export interface DoctrineEntry {
  /** The store key, `doctrine:<slug>`. */
  workId: string;
  slug: string;
  title: string;
  text: string;
  status: DoctrineStatus;
  life: DoctrineLife;
  proposedBy: string;
  createdAt: number;
  updatedAt: number;
  /** Bumps on every change of the entry. */
  version: number;
}

export const SPEC_STATUSES = ['draft', 'accepted', 'retired'] as const;
export type SpecStatus = (typeof SPEC_STATUSES)[number];

export interface SpecClause {
  /** The store key, `spec:S-<n>`. */
  workId: string;
  clauseId: string;
  title: string;
  text: string;
  status: SpecStatus;
  createdBy: string;
  updatedBy: string;
  createdAt: number;
  updatedAt: number;
  /** Bumps on every change; a PATCH names the version it read. */
  version: number;
}

/** Anything the board stores as an entry of its own. */
export type StoredEntry = BoardItem | DoctrineEntry | SpecClause;

const DOCTRINE = 'doctrine:';
const SPEC = 'spec:';

export const doctrineKey = (slug: string): string => `${DOCTRINE}${slug}`;
export const clauseKey = (clauseId: string): string => `${SPEC}${clauseId}`;
export const clauseIdOf = (n: number): string => `S-${n}`;
/** The number of a clause id `S-<n>` (NaN for anything else). */
export const clauseSeq = (clauseId: string): number => (/^S-\d+$/.test(clauseId) ? Number(clauseId.slice(2)) : NaN);
export const compareClauseIds = (a: string, b: string): number =>
  clauseSeq(a) - clauseSeq(b) || (a < b ? -1 : a > b ? 1 : 0);

/** What a store key names. */
export function keyKind(
  key: string,
): { kind: 'item' } | { kind: 'doctrine'; slug: string } | { kind: 'spec'; clauseId: string } {
  if (key.startsWith(DOCTRINE)) return { kind: 'doctrine', slug: key.slice(DOCTRINE.length) };
  if (key.startsWith(SPEC)) return { kind: 'spec', clauseId: key.slice(SPEC.length) };
  return { kind: 'item' };
}

/** Stored entries by what they are. */
export function splitStored(stored: Iterable<StoredEntry>): {
  items: BoardItem[];
  doctrine: DoctrineEntry[];
  spec: SpecClause[];
} {
  const out = { items: [] as BoardItem[], doctrine: [] as DoctrineEntry[], spec: [] as SpecClause[] };
  for (const entry of stored) {
    const kind = keyKind(entry.workId).kind;
    if (kind === 'doctrine') out.doctrine.push(entry as DoctrineEntry);
    else if (kind === 'spec') out.spec.push(entry as SpecClause);
    else out.items.push(entry as BoardItem);
  }
  return out;
}

/** A doctrine entry as everyone sees it: never the expected digest, only whether one is set. */
export interface DoctrineView {
  slug: string;
  title: string;
  text: string;
  level: DoctrineLife['level'];
  status: DoctrineStatus;
  proposedBy: string;
  agreements: number;
  agreedBy: string[];
  expectedDigestSet: boolean;
  blindTests: { pass: number; fail: number; recent: { by: string; result: 'pass' | 'fail'; at: string }[] };
  rejectedReason: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export function doctrineView(entry: DoctrineEntry): DoctrineView {
  const { life } = entry;
  return {
    slug: entry.slug,
    title: entry.title,
    text: entry.text,
    level: life.level,
    status: entry.status,
    proposedBy: entry.proposedBy,
    agreements: life.agreements.length,
    agreedBy: life.agreements.map((a) => a.by),
    expectedDigestSet: life.expectedDigest !== null,
    blindTests: {
      pass: life.blindTests.pass,
      fail: life.blindTests.fail,
      recent: life.blindTests.recent.map((r) => ({ ...r, at: iso(r.at) })),
    },
    rejectedReason: life.rejectedReason,
    createdAt: iso(entry.createdAt),
    updatedAt: iso(entry.updatedAt),
    version: entry.version,
  };
}

export interface ClauseView {
  clauseId: string;
  title: string;
  text: string;
  status: SpecStatus;
  createdBy: string;
  updatedBy: string;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export function clauseView(clause: SpecClause): ClauseView {
  const { workId: _key, ...rest } = clause;
  return { ...rest, createdAt: iso(clause.createdAt), updatedAt: iso(clause.updatedAt) };
}
