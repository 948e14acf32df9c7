// What travels on GET /api/ws (src/ws/protocol.ts describes it; the OpenAPI document carries that
// description as text, so these types are written here and the e2e tests hold them to the server).
import type { paths } from './schema.js';

export type Topic = 'items' | 'leases' | 'shouts' | 'doctrine' | 'activity' | 'presence';

/** A shout as GET /api/shouts lists it. */
export type Shout = paths['/api/shouts']['get']['responses'][200]['content']['application/json']['shouts'][number];
/** A lease as POST /api/claim grants it (the leaseId is the holder's secret; no event carries it). */
export type LeaseGrant = paths['/api/claim']['post']['responses'][200]['content']['application/json'];

/** A lease as events show it. */
export interface EventLease {
  holder: string;
  purpose: 'work' | 'verify';
  fencingToken: number;
  expiresAt: string;
}

export interface BoardEvent {
  type: string;
  actor: string;
  workId: string | null;
  at: string;
  data: Record<string, unknown>;
}

export type ServerMessage =
  | { type: 'subscribed'; boardId: string; topics: Topic[]; seq: number; role: string; merged?: boolean }
  | { type: 'event'; boardId: string; seq: number | null; event: BoardEvent }
  | { type: 'shout'; boardId: string; shout: Shout }
  | { type: 'resync'; boardId: string; seq: number }
  | { type: 'unsubscribed'; boardId: string; reason?: string }
  | { type: 'error'; error: unknown }
  | { type: 'pong' }
  | { type: 'snapshot' | 'roster' | 'presence'; boardId: string; [field: string]: unknown };

export type ClientMessage =
  | { type: 'subscribe'; boardId: string; topics: Topic[]; since?: number; snapshot?: boolean; shoutsAfter?: string }
  | { type: 'unsubscribe'; boardId: string }
  | { type: 'ping' };

/** A board event with its place in the board's log. */
export interface LoggedEvent {
  boardId: string;
  seq: number;
  event: BoardEvent;
}

/** The lease warnings and endings a holder hears (for its own leases, subscribed or not). */
export interface LeaseExpiring {
  boardId: string;
  workId: string;
  at: string;
  holder: string;
  expiresAt: string;
}
export interface LeaseEnded {
  boardId: string;
  workId: string;
  seq: number;
  at: string;
  lease: EventLease;
  /** Why a revoked lease ended: blocked, cancelled, superseded, overridden, verified (another verifier's verdict), rewound; null for an expiry. */
  reason: string | null;
}

/** Which topic a board event belongs to (activity carries every event), as the server sorts them. */
export function topicOf(type: string): Topic {
  if (type.startsWith('lease.')) return 'leases';
  if (type.startsWith('shout')) return 'shouts';
  if (type.startsWith('doctrine.') || type.startsWith('spec.')) return 'doctrine';
  return 'items';
}
