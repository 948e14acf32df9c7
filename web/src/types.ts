// The server's reply shapes, taken from its own schemas rather than restated (type-only: nothing
// of the server reaches the bundle).
import type { z } from 'zod';
import type { ItemView, LeaseGrant } from '../../src/routes/board-schemas.js';
import type { ProjectSummary as ProjectSummarySchema, PublicAccount } from '../../src/routes/schemas.js';
import type { Agent as AgentSchema, Event, Status as StatusSchema } from '../../src/routes/status.js';
import type { Shout as ShoutSchema } from '../../src/routes/shouts.js';
import type { PublicToken } from '../../src/routes/tokens.js';
import type { ClientMessage, Topic } from '../../src/ws/protocol.js';
import type { ItemDelta, PublicCard } from '../../machines/item-view.js';
import type { PresenceView } from '../../src/board/presence.js';
import type { DoctrineView } from '../../src/routes/doctrine.js';
import type { ClauseView } from '../../src/routes/spec.js';
import type { Feedback as FeedbackSchema } from '../../src/routes/feedback.js';
import type { DoctrineLink } from '../../src/board/doctrine.js';

export type Account = z.infer<typeof PublicAccount>;
export type ProjectSummary = z.infer<typeof ProjectSummarySchema>;
export type Token = z.infer<typeof PublicToken>;
export type Item = z.infer<typeof ItemView>;
export type Grant = z.infer<typeof LeaseGrant>;
export type Status = z.infer<typeof StatusSchema>;
export type Agent = z.infer<typeof AgentSchema>;
export type Shout = z.infer<typeof ShoutSchema>;
/** A board event as the log and the socket carry it (`seq` null for a lease warning, which is not logged). */
export type BoardEvent = Omit<z.infer<typeof Event>, 'seq'> & { seq: number | null };
export type SocketMessage = ClientMessage;
export type { Topic };
/** An item as a board card holds it (the socket's snapshot; events' patches keep it current). */
export type Card = PublicCard;
/** An event's patch of one item: workId, version, state and what the commit changed. */
export type ItemPatch = ItemDelta;
/** One agent's last heartbeat. */
export type Presence = PresenceView;
/** A doctrine entry as GET /api/doctrine and the doctrine.* events show it (never the expected digest). */
export type Doctrine = z.infer<typeof DoctrineView>;
/** A spec clause with the work ids of the items linking it (GET /api/spec). */
export type Clause = z.infer<typeof ClauseView>;
/** A spec clause as spec.* events carry it: without the items linking it. */
export type ClauseEvent = Omit<Clause, 'linkedBy'>;
export type Feedback = z.infer<typeof FeedbackSchema>;
/** GET /api/items/{workId}: the item with the level and status of each doctrine entry it links. */
export type ItemDetail = Item & { doctrineLinks: DoctrineLink[] };
