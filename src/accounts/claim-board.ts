// Taking an anonymous account's board over (DOMAIN.md "Agent onboarding"): the person becomes its
// owner, and the board's tokens move with it so its agents keep working under the new owner.
import { auditRow } from '../audit-row.js';
import { AppError } from '../errors/app-error.js';
import { boardLimit } from './projects.js';
import {
  DuplicateKeyError,
  modify,
  type AnonymousAccountRecord,
  type ProjectRecord,
  type Store,
} from '../../store/ports/store.js';
import { purgeAccount } from './service.js';
import { MAX_TOKENS_PER_ACCOUNT, tokensHeld } from './service-tokens.js';

/** How long a claim accepted keeps its anonymous account from the sweep, for the person to finish it; then the sweep finishes it. */
export const CLAIM_GRACE_MS = 60 * 60_000;

/** The claim secret hash of an account the sweep is deleting: no secret hashes to it. */
export const CLAIMED = 'claimed';

export type AnonymousClaim = NonNullable<AnonymousAccountRecord['claim']>;

/** Whether an anonymous account can still be taken over at `now` (no claim accepted, not being swept, not past its 7 days). */
export const claimable = (record: AnonymousAccountRecord | null, now: number): record is AnonymousAccountRecord =>
  record !== null && record.claim === undefined && record.claimSecretHash !== CLAIMED && record.expiresAt > now;

/**
 * Refuses unless the person may own `boards` too, and hold their tokens (which move with them):
 * FREE_PROJECT_LIMIT past the account's board limit, INVALID_INPUT past MAX_TOKENS_PER_ACCOUNT.
 * Call it holding the person's account lock (src/accounts/account-lock.ts), as every change to
 * what an account owns is made, so concurrent creations, transfers and claims cannot pass it together.
 */
export async function ensureRoom(
  store: Store,
  accountId: string,
  fromId: string,
  boards: readonly string[],
): Promise<void> {
  const [owned, limit, moving] = await Promise.all([
    store.projects.count({ ownerId: accountId }),
    boardLimit(store, accountId),
    boards.length ? store.tokens.count({ accountId: fromId, boardId: { $in: boards } }) : 0,
  ]);
  if (owned + boards.length > limit) {
    throw new AppError(
      'FREE_PROJECT_LIMIT',
      `Taking this over would make ${owned + boards.length} boards; this account may own ${limit} on its plan.`,
      { limit },
    );
  }
  const held = await tokensHeld(store, accountId, moving);
  if (held + moving > MAX_TOKENS_PER_ACCOUNT) {
    throw new AppError(
      'INVALID_INPUT',
      `Taking this over would give your account ${held + moving} tokens (the board’s agents’ tokens come with it); an account holds at most ${MAX_TOKENS_PER_ACCOUNT}. Revoke unused tokens first.`,
      { limit: MAX_TOKENS_PER_ACCOUNT },
    );
  }
}

/**
 * Accepts a claim: one version-checked write naming the person and the boards, so of two claims
 * (by secret or nonce) and the sweep exactly one goes on. The claim secret is kept: with it, or
 * with the board's nonce, only that person can finish the claim if it is cut short.
 */
export async function holdForClaim(
  store: Store,
  record: AnonymousAccountRecord,
  claim: AnonymousClaim,
  now: number,
): Promise<AnonymousClaim> {
  const held = await store.anonymousAccounts.update(record._id, record.version, {
    expiresAt: Math.max(record.expiresAt, now + CLAIM_GRACE_MS),
    claim,
  });
  if (!held) throw new AppError('INVALID_LINK_TOKEN', 'This board was claimed meanwhile, or is no longer claimable.');
  return claim;
}

/**
 * Finishes an accepted claim: moves each of its boards to the person, then retires the anonymous
 * account when it has no board left, or else lifts the hold (a nonce took one of several boards).
 * Every step may be run again, so the person's retry or the sweep finishes a claim cut short
 * anywhere. Answers the boards moved.
 */
export async function finishClaim(
  store: Store,
  anonymousId: string,
  claim: AnonymousClaim,
  now: number,
): Promise<string[]> {
  const moved: string[] = [];
  for (const projectId of claim.boards)
    if (await takeBoard(store, projectId, anonymousId, now, claim)) moved.push(projectId);
  if (!(await retireWhenEmpty(store, anonymousId))) {
    const current = await store.anonymousAccounts.get(anonymousId);
    // A hold changed meanwhile stays: finishing it again is harmless.
    if (current?.claim) await store.anonymousAccounts.update(anonymousId, current.version, {}, ['claim']);
  }
  // The boards are no longer anonymous: their claim links are spent.
  for (const projectId of moved) await store.claimNonces.deleteMany({ projectId });
  return moved;
}

/**
 * The anonymous account a board is being taken from: its owner, or, once an accepted claim made a
 * person the owner, the account still holding the owner's membership (it lets go last).
 */
export async function anonymousOwnerOf(store: Store, project: ProjectRecord): Promise<AnonymousAccountRecord | null> {
  const owner = await store.anonymousAccounts.get(project.ownerId);
  if (owner) return owner;
  for (const member of await store.members.find({ projectId: project._id, role: 'owner' })) {
    if (member.accountId === project.ownerId) continue;
    const previous = await store.anonymousAccounts.get(member.accountId);
    if (previous) return previous;
  }
  return null;
}

/**
 * Moves one board from the anonymous account to the person, in an order that leaves the board
 * reachable by its agents and by the person after a failure at any step, and safe to run again:
 * the person's owner membership first, then the owner (a version-checked change; already the
 * person's: carry on), then the board's tokens (they keep their ids, secrets and agent
 * principals), and last the anonymous account's membership, which is what let the tokens act
 * until they moved. Items, events and shouts are the board's and stay as they are. Answers false,
 * changing nothing, when the board is gone or belongs to someone else.
 */
export async function takeBoard(
  store: Store,
  projectId: string,
  fromId: string,
  now: number,
  claim: AnonymousClaim,
): Promise<boolean> {
  const toId = claim.by;
  const before = await store.projects.get(projectId);
  if (!before || (before.ownerId !== fromId && before.ownerId !== toId)) return false;
  const memberId = `${projectId}:${toId}`;
  let inserted = false;
  try {
    await store.members.insert({
      _id: memberId,
      version: 1,
      projectId,
      accountId: toId,
      role: 'owner',
      acceptedAt: now,
    });
    inserted = true;
  } catch (e) {
    if (!(e instanceof DuplicateKeyError)) throw e; // a run before this one wrote it
  }
  let taken = true;
  const moved = await modify(store.projects, projectId, (project) => {
    if (project.ownerId === toId) return null;
    if (project.ownerId === fromId) return { ownerId: toId };
    taken = false;
    return null;
  });
  if (!moved || !taken) {
    if (inserted) await store.members.delete(memberId);
    return false;
  }
  // A membership found in place rather than written is raised only now that the board is the person's.
  if (!inserted) await modify(store.members, memberId, (m) => (m.role === 'owner' ? null : { role: 'owner' as const }));
  for (const token of await store.tokens.find({ accountId: fromId, boardId: projectId })) {
    await modify(store.tokens, token._id, (t) => (t.accountId === fromId ? { accountId: toId } : null));
  }
  await store.members.delete(`${projectId}:${fromId}`);
  try {
    // One row per hand-over, however many times it is run.
    await store.audit.insert(
      auditRow({
        id: `claim:${projectId}:${fromId}`,
        at: now,
        actor: `user:${toId}`,
        action: 'board.claimed',
        projectId,
        origin: claim.origin ?? null,
        data: { from: fromId, via: claim.via },
      }),
    );
  } catch (e) {
    if (!(e instanceof DuplicateKeyError)) throw e;
  }
  return true;
}

/** Ends an anonymous account that has given all its boards away (retireAnonymous); false while it still owns one. */
export async function retireWhenEmpty(store: Store, anonymousId: string): Promise<boolean> {
  if ((await store.projects.count({ ownerId: anonymousId })) > 0) return false;
  await retireAnonymous(store, anonymousId);
  return true;
}

/**
 * Deletes an anonymous account with whatever it still owns (purgeAccount), and its record last:
 * a failure part-way leaves the record, so the sweep finds the account and finishes the job.
 * Answers the deleted boards' ids.
 */
export async function retireAnonymous(store: Store, anonymousId: string): Promise<string[]> {
  const boards = await purgeAccount(store, anonymousId);
  for (const projectId of boards) {
    await store.enrollments.deleteMany({ projectId });
    await store.claimNonces.deleteMany({ projectId });
  }
  await store.anonymousAccounts.delete(anonymousId);
  return boards;
}
