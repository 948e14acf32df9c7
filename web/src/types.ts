// The server's shapes as the page uses them, from the typed client (@agent-board/client): REST
// replies from its schema (generated from the served OpenAPI document), socket messages from its
// own types. Type-only: nothing of them reaches the bundle.
import type { BoardEvent as LoggedEvent, Reply } from '@agent-board/client';

export type Account = Reply<'/api/auth/me', 'get'>['user'];
export type ProjectSummary = Reply<'/api/projects', 'get'>['projects'][number];
export type Token = Reply<'/api/accounts/tokens', 'get'>['tokens'][number];
/** GET /api/items/{workId}: the item with the level and status of each doctrine entry it links. */
export type ItemDetail = Reply<'/api/items/{workId}', 'get'>;
export type Item = Reply<'/api/items', 'get'>['items'][number];
export type Status = Reply<'/api/status', 'get'>;
export type Shout = Reply<'/api/shouts', 'get'>['shouts'][number];
/** A board event as the log and the socket carry it (`seq` null for a lease warning, which is not logged). */
export type BoardEvent = LoggedEvent & { seq: number | null };
/** An item as a board card holds it: the socket's snapshot leaves out the long texts (events' patches keep it current). */
export type Card = Omit<Item, 'description' | 'criteria' | 'doctrine' | 'spec' | 'progress'>;
/** An event's patch of one item: workId, version and state, and every field the commit changed. */
export type ItemPatch = Pick<Item, 'workId' | 'version' | 'state'> & Partial<Item>;
/**
 * One agent's last heartbeat, as the socket's roster and presence messages carry it (the socket
 * is described in the OpenAPI document as text only, and the client types no presence message).
 */
export interface Presence {
  principal: string;
  status: string;
  note: string;
  workId: string | null;
  lastSeenAt: string;
}
/** A doctrine entry as GET /api/doctrine and the doctrine.* events show it (never the expected digest). */
export type Doctrine = Reply<'/api/doctrine', 'get'>['entries'][number];
/** A spec clause with the work ids of the items linking it (GET /api/spec). */
export type Clause = Reply<'/api/spec', 'get'>['clauses'][number];
/** A spec clause as spec.* events carry it: without the items linking it. */
export type ClauseEvent = Omit<Clause, 'linkedBy'>;
export type Feedback = Reply<'/api/feedback', 'get'>['feedback'][number];
