// The collections of the store and their indexes, declared once for both adapters.
import type { BoardCollection } from './boards.js';
import type { Collection } from './collection.js';
import type { UsageCollection } from './usage.js';
import type {
  AccountLockRecord,
  AccountRecord,
  AnonymousAccountRecord,
  AuditRecord,
  BillingEventRecord,
  BillingRecord,
  ClaimNonceRecord,
  DeviceGrantRecord,
  EnrollmentRecord,
  EventRecord,
  InvitationRecord,
  AllowlistRecord,
  BoardStatsDayRecord,
  FeedbackLedgerRecord,
  FeedbackRecord,
  LinkTokenRecord,
  MailOutboxRecord,
  MemberRecord,
  PresenceRecord,
  ProjectRecord,
  RestorePointPartRecord,
  RestorePointRecord,
  SessionRecord,
  SharingMailRecord,
  ShoutRecord,
  TokenRecord,
  TransferRecord,
} from './records.js';

export interface IndexSpec {
  name: string;
  fields: readonly string[];
  unique: boolean;
  /**
   * A unique index whose key every document's `_id` is made of (`idOfKey`, the only `_id` such a
   * collection stores): the id's uniqueness is the index's, so an adapter that checks a unique index
   * slowly may keep this one for reads alone (store/mongo/compound-unique.ts).
   */
  idKey?: true;
}

/** The `_id` of a document keyed by its unique index (`idKey`): the key's values, in the index's order, joined by ':'. */
export const idOfKey = (...values: readonly (string | number)[]): string => values.join(':');
/** An event's `_id`: its board and seq (the events' unique index). */
export const eventId = (boardId: string, seq: number): string => idOfKey(boardId, seq);
/**
 * An item version's `_id` in a log of versions: its board, its version as a string that sorts as the
 * number does (a letter for its count of digits, then the digits: `a7`, `b42`, `e12345`), and its
 * work id. A board's versions after one, up to another, are then one `_id` range.
 */
export const itemVersionId = (boardId: string, v: number, workId: string): string =>
  idOfKey(boardId, `${String.fromCharCode(96 + String(v).length)}${v}`, workId);

export interface Collections {
  accounts: Collection<AccountRecord>;
  sessions: Collection<SessionRecord>;
  tokens: Collection<TokenRecord>;
  projects: Collection<ProjectRecord>;
  members: Collection<MemberRecord>;
  boards: BoardCollection;
  events: Collection<EventRecord>;
  boardStatsDays: Collection<BoardStatsDayRecord>;
  audit: Collection<AuditRecord>;
  linkTokens: Collection<LinkTokenRecord>;
  shouts: Collection<ShoutRecord>;
  presence: Collection<PresenceRecord>;
  billing: Collection<BillingRecord>;
  billingEvents: Collection<BillingEventRecord>;
  restorePoints: Collection<RestorePointRecord>;
  restorePointParts: Collection<RestorePointPartRecord>;
  invitations: Collection<InvitationRecord>;
  transfers: Collection<TransferRecord>;
  enrollments: Collection<EnrollmentRecord>;
  deviceGrants: Collection<DeviceGrantRecord>;
  claimNonces: Collection<ClaimNonceRecord>;
  anonymousAccounts: Collection<AnonymousAccountRecord>;
  accountLocks: Collection<AccountLockRecord>;
  sharingMails: Collection<SharingMailRecord>;
  mailOutbox: Collection<MailOutboxRecord>;
  allowlist: Collection<AllowlistRecord>;
  usage: UsageCollection;
  feedback: Collection<FeedbackRecord>;
  feedbackLedgers: Collection<FeedbackLedgerRecord>;
}

export type CollectionName = keyof Collections;

const idx = (fields: string[], unique = false): IndexSpec => ({ name: fields.join('_'), fields, unique });

export const SCHEMA: Record<CollectionName, readonly IndexSpec[]> = {
  accounts: [idx(['email'], true), idx(['referralCode'], true), idx(['purgeAfter'])],
  sessions: [idx(['accountId']), idx(['expiresAt'])],
  tokens: [idx(['secretHash'], true), idx(['accountId']), idx(['agentId']), idx(['boardId'])],
  projects: [idx(['ownerId']), idx(['compUntil']), idx(['importing'])],
  members: [idx(['accountId', 'acceptedAt']), idx(['projectId'])],
  boards: [idx(['nextDeadline'])],
  events: [{ ...idx(['boardId', 'seq'], true), idKey: true }],
  boardStatsDays: [idx(['boardId', 'day'], true)],
  audit: [idx(['projectId', 'at']), idx(['at']), idx(['actor', 'at']), idx(['target', 'at'])],
  linkTokens: [idx(['accountId']), idx(['expiresAt'])],
  shouts: [idx(['boardId', 'at'])],
  presence: [idx(['boardId', 'seenAt'])],
  billing: [idx(['customerId'], true), idx(['accountId']), idx(['status'])],
  billingEvents: [idx(['projectId', 'at'])],
  restorePoints: [idx(['boardId', 'seq'], true), idx(['boardId', 'capturedAt'])],
  restorePointParts: [idx(['pointId', 'n'], true), idx(['boardId', 'capturedAt'])],
  invitations: [idx(['tokenHash'], true), idx(['projectId', 'createdAt']), idx(['expiresAt'])],
  transfers: [idx(['projectId']), idx(['toAccountId'])],
  enrollments: [idx(['projectId']), idx(['expiresAt']), idx(['createdBy'])],
  deviceGrants: [idx(['userCodeHash'], true), idx(['expiresAt']), idx(['approvedBy'])],
  claimNonces: [idx(['projectId']), idx(['expiresAt'])],
  anonymousAccounts: [idx(['expiresAt'])],
  accountLocks: [],
  sharingMails: [idx(['projectId', 'at']), idx(['projectId', 'to', 'at'])],
  mailOutbox: [idx(['heldUntil'])],
  allowlist: [idx(['kind', 'value'], true)],
  usage: [idx(['day', 'scope'])],
  // Listings page newest first by _id: by board, by board and status, by status (the operators' filters).
  feedback: [idx(['boardId']), idx(['boardId', 'status']), idx(['status'])],
  feedbackLedgers: [],
};

export const COLLECTION_NAMES = Object.keys(SCHEMA) as CollectionName[];
