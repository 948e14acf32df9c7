// An item as everyone outside the board sees it (REST replies, event payloads, socket snapshots):
// times as ISO strings, never a lease id (the holder's capability) nor the board's bookkeeping
// (work holders, ended leases). One shape, so an event's patch applies to what GET returned.
import type { BoardItem } from './board-item.js';

/** Times formatted lately: an item's times are formatted again on every view of it, and formatting costs half a microsecond. */
const formatted = new Map<number, string>();
const FORMATTED_KEPT = 4096;

/** A time (ms) as an ISO string, as `Date.prototype.toISOString` writes it. */
export function iso(ms: number): string {
  let text = formatted.get(ms);
  if (text === undefined) {
    if (formatted.size >= FORMATTED_KEPT) formatted.clear();
    formatted.set(ms, (text = new Date(ms).toISOString()));
  }
  return text;
}

export interface PublicItem {
  workId: string;
  title: string;
  description: string;
  type: string;
  priority: number;
  rank: number | null;
  parentId: string | null;
  dependsOn: string[];
  verify: 'none' | 'required';
  criteria: string[];
  doctrine: string[];
  spec: string[];
  labels: string[];
  state: string;
  attempts: number;
  maxAttempts: number;
  lease: { holder: string; purpose: 'work' | 'verify'; fencingToken: number; expiresAt: string } | null;
  submission: { head: string; by: string; at: string } | null;
  verifications: {
    by: string;
    head: string;
    verdict: 'pass' | 'fail';
    finding: string | null;
    at: string;
    evidence?: string[];
  }[];
  finding: string | null;
  overridden: { by: string; reason: string; at: string } | null;
  blockedReason: string | null;
  progress: { note: string; by: string; at: string } | null;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export function publicItem(item: BoardItem): PublicItem {
  const { life } = item;
  return {
    workId: item.workId,
    title: item.title,
    description: item.description,
    type: item.type,
    priority: item.priority,
    rank: item.rank,
    parentId: item.parentId,
    dependsOn: item.dependsOn,
    verify: item.verify,
    criteria: item.criteria,
    doctrine: item.doctrine,
    spec: item.spec,
    labels: item.labels,
    state: item.state,
    attempts: life.attempts,
    maxAttempts: life.maxAttempts,
    lease: life.lease
      ? {
          holder: life.lease.holder,
          purpose: life.lease.purpose,
          fencingToken: life.lease.fencingToken,
          expiresAt: iso(life.lease.expiresAt),
        }
      : null,
    submission: life.submission
      ? { head: life.submission.head, by: life.submission.by, at: iso(life.submission.at) }
      : null,
    verifications: life.verifications.map((v) => ({ ...v, at: iso(v.at) })),
    finding: life.finding,
    overridden: life.overridden ? { ...life.overridden, at: iso(life.overridden.at) } : null,
    blockedReason: life.blockedReason,
    progress: item.progress ? { ...item.progress, at: iso(item.progress.at) } : null,
    createdAt: iso(item.createdAt),
    updatedAt: iso(item.updatedAt),
    version: item.version,
  };
}

/** The fields a board card shows: the item without its long texts and digests (a 10,000-item snapshot stays small). */
export type PublicCard = Omit<PublicItem, 'description' | 'criteria' | 'doctrine' | 'spec' | 'progress'>;

export function publicCard(item: BoardItem): PublicCard {
  const { description: _d, criteria: _c, doctrine: _o, spec: _s, progress: _p, ...card } = publicItem(item);
  return card;
}

/**
 * What a commit changed of one item, for its events: workId, version and state always, plus every
 * field whose value differs (all of them for a new item). Applied over the item a watcher holds
 * at an older version, it gives the item as committed.
 */
export type ItemDelta = Pick<PublicItem, 'workId' | 'version' | 'state'> & Partial<PublicItem>;

export function itemDelta(before: BoardItem | undefined, after: BoardItem): ItemDelta {
  const now = publicItem(after);
  if (!before) return now;
  const was = publicItem(before) as unknown as Record<string, unknown>;
  const patch: Record<string, unknown> = { workId: now.workId, version: now.version, state: now.state };
  for (const key in now) {
    const value = (now as unknown as Record<string, unknown>)[key];
    if (!same(value, was[key])) patch[key] = value;
  }
  return patch as ItemDelta;
}

/** Whether two values of a public item (JSON: primitives, arrays, plain objects) are equal, as their JSON texts would be. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => same(v, b[i]));
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k, i) => k === kb[i] && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}
