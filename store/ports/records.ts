// What each aggregate stores. Secrets are stored only as hashes.
import type { Doc } from './collection.js';

export interface AccountRecord extends Doc {
  email: string;
  passwordHash: string;
  displayName: string | null;
  defaultProjectId: string | null;
  emailVerified: boolean;
  referralCode: string;
  referredBy: string | null;
  referralMonths: number;
  createdAt: number;
  /** Set when the account was deleted (by its owner or an operator): sign-in refused, data kept until purgeAfter (DOMAIN.md "Operators"). */
  deletedAt?: number | null;
  deletedBy?: 'owner' | 'operator' | null;
  /** When the purge sweep removes what the deleted account held; restore is possible until then. */
  purgeAfter?: number | null;
  /**
   * When a revocation of everything it issued last began (src/accounts/credentials.ts): a token
   * minted through one of its codes or device approvals made before then is withdrawn when it is
   * stored after, whatever became of the code or grant (read from the store, on every node).
   */
  issuedRevokedAt?: number | null;
}

export interface SessionRecord extends Doc {
  /** _id is the sha256 of the cookie value. */
  accountId: string;
  createdAt: number;
  expiresAt: number;
  revoked: boolean;
  /** An operator acting as this account (a session of its own, 30 minutes): marked on every response and audit row. */
  impersonation?: { operatorId: string; operatorSessionId: string; reason: string } | null;
}

export interface TokenRecord extends Doc {
  accountId: string;
  agentId: string;
  secretHash: string;
  prefix: string;
  name: string;
  scope: 'account' | 'workspace' | 'resource';
  boardId: string | null;
  role: 'admin' | 'member' | 'viewer' | null;
  resources: string[] | null;
  expiresAt: number | null;
  lastUsedAt: number | null;
  revoked: boolean;
  createdAt: number;
  /** The token that issued this one; null or absent when a session did. */
  issuedBy?: string | null;
}

export interface ProjectRecord extends Doc {
  name: string;
  ownerId: string;
  plan: 'free' | 'pro';
  createdAt: number;
  lastActivityAt: number;
  /** A complimentary plan an operator granted (src/admin/money.ts), in force until `compUntil`; then the plan is billing's again. */
  compPlan?: 'pro' | null;
  compUntil?: number | null;
  /** The owner's account id while that account is deleted (src/admin/deletion.ts): while it still names the owner, the board is closed (BOARD_CLOSED). */
  deletedOwner?: string | null;
  /**
   * When an operator's import began making this board (src/admin/import.ts): until the import's
   * commit clears it the board is no one's (not listed, not selectable, no member row), and one
   * left stale by an import cut short is swept (sweepImports).
   */
  importing?: number | null;
  /** The import that made it (src/admin/import.ts importKey): a retry of that import answers this board. */
  importKey?: string | null;
}

export interface MemberRecord extends Doc {
  /** _id is `${projectId}:${accountId}`. */
  projectId: string;
  accountId: string;
  role: 'owner' | 'admin' | 'member' | 'viewer';
  acceptedAt: number;
}

/** A board's header; its items are kept beside it (ports/boards.ts). */
export interface BoardRecord extends Doc {
  /** _id is the project id; `version` is the board version every mutation checks. */
  nextWorkSeq: number;
  nextFencingToken: number;
  lastSeq: number;
  /** The commit that wrote this version (a random id; absent before the first): a commit started while that one was under way names it and lands only on it. */
  commitId?: string;
  /** The nearest lease expiry on the board, so any node can find boards whose leases are due. */
  nextDeadline: number | null;
  /**
   * Events committed with this version, copied to the events collection after the commit.
   * Committing them in the same atomic update keeps the log gapless across crashes: whoever
   * loads the board next copies what is still here (inserts by _id are idempotent).
   */
  outbox?: Omit<EventRecord, 'version'>[];
  /** Items per state as of this version, kept with every commit (absent on a board never written to). */
  counts?: Record<string, number>;
  /** Every stored entry (items, doctrine entries, spec clauses) as of this version, kept with every commit; absent on a board no commit wrote it for (then `counts` sums the entries). */
  entries?: number;
  /** Running metrics the board layer folds from each commit's events (bounded; opaque here). */
  stats?: Record<string, unknown>;
  /** Leases of items a rewind removed (machines/board.ts RetiredLease), so late holders learn why. */
  retiredLeases?: { leaseId: string; workId: string; reason: string }[];
  /** Who paused the board and when (ms), or null (absent) while it runs (DOMAIN.md "Pausing a board"). */
  paused?: { by: string; at: number } | null;
  /** The highest version an item had when a rewind removed it (machines/board.ts Board.removedVersion); absent: none was. */
  removedVersion?: number;
}

export interface EventRecord extends Doc {
  /** _id is `${boardId}:${seq}`. */
  boardId: string;
  seq: number;
  type: string;
  actor: string;
  workId: string | null;
  at: number;
  data: Record<string, unknown>;
}

/** An event as its commit hands it on (to the bus, to sockets): the log's record without its storage fields. */
export type CommittedEvent = Omit<EventRecord, 'version' | '_id'>;

export interface LinkTokenRecord extends Doc {
  /** _id is the sha256 of the token sent by mail; the token itself is never stored. */
  accountId: string;
  purpose: 'reset-password' | 'verify-email';
  /** The address a verification was sent to; a later email change voids it. */
  email: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * A board's stats of one finished day, moved out of its header (machines/board-stats.ts
 * closedDays). `_id` is `<boardId>:<day>`; `fromVersion` is the header version they were read from
 * (a later one wins).
 */
export interface BoardStatsDayRecord extends Doc {
  boardId: string;
  /** UTC, YYYY-MM-DD. */
  day: string;
  stats: Record<string, unknown>;
  fromVersion: number;
}

export interface ShoutRecord extends Doc {
  /** _id is `<boardId>:<time, base36, padded>:<random>`, so ids sort in posting order. */
  boardId: string;
  from: string;
  text: string;
  kind: 'info' | 'warn' | 'request' | 'handoff';
  workId: string | null;
  /** A direct shout's addressee. */
  to: string | null;
  at: number;
  /** When the addressee first received it (fetched, or delivered to a live socket). */
  deliveredAt: number | null;
}

/** Where a feedback entry stands: open until an operator triages it; `promoting` while its item is being made. */
export type FeedbackStatus = 'open' | 'promoting' | 'resolved' | 'dismissed' | 'promoted';

/** An agent's feedback about its working conditions on a board, held for the operators (DOMAIN.md "Feedback"). */
export interface FeedbackRecord extends Doc {
  /** _id is `fb_<time, base36, padded to 10><10 hex>`, so ids sort in posting order across boards. */
  boardId: string;
  /** The principal that posted it. */
  from: string;
  kind: 'problem' | 'suggestion' | 'question';
  text: string;
  workId: string | null;
  status: FeedbackStatus;
  at: number;
  /** The triage that closed it (resolve, dismiss or promote): who, when, why. */
  closedBy: string | null;
  closedAt: number | null;
  reason: string | null;
  /**
   * A promotion's claim, taken with the version check before the item is made (one operator's at
   * a time); a claim older than its staleness bound belongs to a promotion that died and may be taken over.
   */
  promotion: { token: string; by: string; at: number } | null;
  /** The item the promotion made, labelled `feedback:<_id>`. */
  promotedWorkId: string | null;
}

/**
 * A board's open feedback (_id is the board id): every entry that still counts against the limits,
 * changed only with the version check, so concurrent posts on any node cannot pass them together.
 */
export interface FeedbackLedgerRecord extends Doc {
  open: { id: string; from: string; at: number }[];
}

export interface PresenceRecord extends Doc {
  /** _id is `<boardId>|<principal>`. */
  boardId: string;
  principal: string;
  status: 'idle' | 'working' | 'blocked' | 'offline';
  note: string;
  workId: string | null;
  seenAt: number;
}

/** A project's billing with the payment provider; `_id` is the project id. Created when a customer is attached. */
export interface BillingRecord extends Doc {
  accountId: string;
  customerId: string;
  subscriptionId: string | null;
  /** The provider's subscription status (active, trialing, past_due, canceled, …); null before one exists. */
  status: string | null;
  interval: 'month' | 'year' | null;
  priceId: string | null;
  currentPeriodEnd: number | null;
  cancelAtPeriodEnd: boolean;
  /** Provider time of the last applied subscription change: an older event never overwrites it. */
  changedAt: number | null;
  /** When the subscription last became past_due (Pro for 7 days from then); null otherwise. */
  pastDueSince: number | null;
  /**
   * The latest provider events applied here (newest last, a bounded window): the webhook's
   * idempotence mark, written in the same version-checked update as their effect. Absent: none yet.
   */
  appliedEventIds?: string[];
  /** When the reconcile pass or an operator's re-read last settled this record from the provider. */
  reconciledAt?: number | null;
  /**
   * The board's latest checkout session and the price it was opened at: while the provider holds
   * it open, another checkout answers it (or expires it first, for another price). Absent: none yet.
   */
  checkout?: { sessionId: string; priceId: string } | null;
  /**
   * Once the reconcile pass found the board gone: since when, and when it last listed the
   * customer's subscriptions to cancel any still charging for it (src/billing/reconcile.ts).
   */
  boardGone?: { since: number; listedAt: number } | null;
}

/** A provider event whose effects were applied; `_id` is the provider's event id. */
export interface BillingEventRecord extends Doc {
  projectId: string;
  type: string;
  at: number;
}

/** A board's work graph at some commit (DOMAIN.md "Restore points and rewind"); `_id` is `rp_<boardId>_<seq>`. */
export interface RestorePointRecord extends Doc {
  boardId: string;
  /** The board's seq when captured. */
  seq: number;
  capturedAt: number;
  reason: string;
  itemCount: number;
  /** `sha256:<hex>` of the canonical JSON of the graph (machines/restore-point.ts). */
  fingerprint: string;
  /** How many parts hold that JSON (restorePointParts), so a point of a board of any size fits MongoDB's 16 MB documents. */
  parts: number;
}

/** One part of a restore point's canonical JSON: _id is `<restorePointId>:<n>`, n from 0. */
export interface RestorePointPartRecord extends Doc {
  pointId: string;
  boardId: string;
  n: number;
  text: string;
  /** The point's, so retention deletes parts by board and age as it deletes points. */
  capturedAt: number;
}

export interface AuditRecord extends Doc {
  at: number;
  actor: string;
  action: string;
  projectId: string | null;
  /** What an operator action was done to (`account:<id>`, `board:<id>`, `token:<id>`, …), for the operators' audit filter. */
  target?: string | null;
  data: Record<string, unknown>;
}

/** A board invitation (DOMAIN.md "Sharing"). */
export interface InvitationRecord extends Doc {
  /** _id is a random id, named in the accept link beside the token. */
  projectId: string;
  /** The invited address, canonical (as accounts store theirs). */
  email: string;
  role: 'admin' | 'member' | 'viewer';
  /** sha256 of the link's token (32 random bytes); a resend replaces it, so the old link dies. */
  tokenHash: string;
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
  status: 'pending' | 'accepted' | 'revoked';
  acceptedBy: string | null;
  acceptedAt: number | null;
}

/** A board's ownership offered to one of its members (DOMAIN.md "Sharing"). */
export interface TransferRecord extends Doc {
  projectId: string;
  fromAccountId: string;
  toAccountId: string;
  createdAt: number;
  expiresAt: number;
  status: 'pending' | 'accepted' | 'cancelled';
}

/** An enrollment code (DOMAIN.md "Agent onboarding"): _id is the sha256 of the code, shown once. */
export interface EnrollmentRecord extends Doc {
  projectId: string;
  role: 'admin' | 'member' | 'viewer';
  /** Uses left; a redemption is a version-checked decrement, so the last use goes to one caller. */
  usesLeft: number;
  /**
   * Its last use was taken (no use left, and not revoked): kept until it expires, so a revocation
   * of all its maker issued still finds it, and a redemption of that last use sees the revocation.
   */
  spent?: boolean;
  createdBy: string;
  createdAt: number;
  expiresAt: number;
}

/** One device-flow grant (RFC 8628): _id is the sha256 of the device code. */
export interface DeviceGrantRecord extends Doc {
  /** sha256 of the normalised user code (XXXXXXXX, upper case). */
  userCodeHash: string;
  clientName: string;
  /** The board the agent asked for, if any; the approver picks the board in the end. */
  projectId: string | null;
  /** `minting`: a poll took the approved grant and is minting its token; `delivered` once it is minted. */
  status: 'pending' | 'approved' | 'denied' | 'minting' | 'delivered';
  approvedBy: string | null;
  approvedProjectId: string | null;
  /** When the approval was made (the approving request's time); absent on grants approved before it was kept. */
  approvedAt?: number | null;
  createdAt: number;
  expiresAt: number;
  lastPolledAt: number | null;
  /** Seconds between polls: 5, grown by each slow_down (RFC 8628 §3.5). */
  interval: number;
}

/** A single-use nonce to take one anonymous board over: _id is the sha256 of the nonce. */
export interface ClaimNonceRecord extends Doc {
  projectId: string;
  createdBy: string;
  createdAt: number;
  expiresAt: number;
}

/** An anonymous account not yet claimed: _id is the account id; deleted after expiresAt by a sweep. */
export interface AnonymousAccountRecord extends Doc {
  /** sha256 of the claim secret handed out once at provisioning. */
  claimSecretHash: string;
  createdAt: number;
  expiresAt: number;
  /**
   * A claim accepted and not yet finished (src/accounts/claim-board.ts): the person taking the
   * boards, which boards, how, and the request that asked (for the audit row, whoever finishes it;
   * absent on claims held by an earlier version). Only that person may finish it; the sweep
   * finishes it for them.
   */
  claim?: { by: string; boards: string[]; via: 'nonce' | 'claim-secret'; origin?: RequestOrigin };
}

/** The request behind an audited change (src/audit-row.ts). */
export interface RequestOrigin {
  requestId: string;
  /** The client's address (src/http/trusted-proxies.ts), not a proxy's. */
  address: string;
  /** The operator acting as the account, when the request came through an impersonation session. */
  impersonatedBy?: string;
}

/** One owner-changing operation of an account at a time (src/accounts/account-lock.ts): _id is the account id. */
export interface AccountLockRecord extends Doc {
  /** Who holds it: a random id per holder. */
  holder: string;
  /** After this (wall clock) a waiter may take it over: its holder crashed. */
  until: number;
}

/**
 * One mail board sharing sent (an invitation, a resend, a transfer offer): the board's mail budget
 * counts these (src/accounts/sharing-mail.ts); kept an hour.
 */
export interface SharingMailRecord extends Doc {
  projectId: string;
  /** sha256 of the canonical address mailed. */
  to: string;
  kind: 'invitation' | 'resend' | 'transfer';
  at: number;
}

/**
 * One message waiting to be sent over SMTP (src/mail/outbox.ts). It stays until the server
 * accepts it or refuses it for good, so a node that dies does not take its mail with it.
 */
export interface MailOutboxRecord extends Doc {
  /** The message (recipient, subject, text), AES-256-GCM under a key derived from the server secret: reset links are secrets. */
  sealed: string;
  /** Attempts made so far. */
  attempts: number;
  /**
   * Until then the node that holds it (sending it, or waiting for its next attempt) keeps it;
   * after it, any node's sweep may take it over: its holder stopped.
   */
  heldUntil: number;
  createdAt: number;
}

/** An entry operators exempt from the per-address budgets (DOMAIN.md "Operators", allowlist). */
export interface AllowlistRecord extends Doc {
  kind: 'address' | 'cidr' | 'domain';
  /** The address, CIDR or email domain, canonical. */
  value: string;
  reason: string;
  addedBy: string;
  at: number;
}

/**
 * Counters kept per day and subject for the operators' cost model and abuse ranking, bumped per
 * request or commit (never computed by scanning data). _id is `<day>:<scope>:<key>`.
 */
export interface UsageRecord extends Doc {
  /** YYYY-MM-DD (UTC); YYYY-MM-DDTHH:MM for the ten-minute buckets the abuse ranking reads (src/admin/usage.ts). */
  day: string;
  scope: 'account' | 'board' | 'address' | 'principal' | 'platform';
  key: string;
  counts: Record<string, number>;
}
