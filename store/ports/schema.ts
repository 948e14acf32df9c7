// The collections of the store and their indexes, declared once for both adapters.
import type { Collection } from './collection.js';
import type { AccountRecord, AuditRecord, BoardRecord, EventRecord, LinkTokenRecord, MemberRecord, PresenceRecord, ProjectRecord, SessionRecord, ShoutRecord, TokenRecord } from './records.js';

export interface IndexSpec {
  name: string;
  fields: readonly string[];
  unique: boolean;
}

export interface Collections {
  accounts: Collection<AccountRecord>;
  sessions: Collection<SessionRecord>;
  tokens: Collection<TokenRecord>;
  projects: Collection<ProjectRecord>;
  members: Collection<MemberRecord>;
  boards: Collection<BoardRecord>;
  events: Collection<EventRecord>;
  audit: Collection<AuditRecord>;
  linkTokens: Collection<LinkTokenRecord>;
  shouts: Collection<ShoutRecord>;
  presence: Collection<PresenceRecord>;
}

export type CollectionName = keyof Collections;

const idx = (fields: string[], unique = false): IndexSpec => ({ name: fields.join('_'), fields, unique });

export const SCHEMA: Record<CollectionName, readonly IndexSpec[]> = {
  accounts: [idx(['email'], true), idx(['referralCode'], true)],
  sessions: [idx(['accountId'])],
  tokens: [idx(['secretHash'], true), idx(['accountId']), idx(['agentId']), idx(['boardId'])],
  projects: [idx(['ownerId'])],
  members: [idx(['accountId', 'acceptedAt']), idx(['projectId'])],
  boards: [idx(['nextDeadline'])],
  events: [idx(['boardId', 'seq'], true)],
  audit: [idx(['projectId', 'at'])],
  linkTokens: [idx(['accountId'])],
  shouts: [idx(['boardId', 'at'])],
  presence: [idx(['boardId', 'seenAt'])],
};

export const COLLECTION_NAMES = Object.keys(SCHEMA) as CollectionName[];
