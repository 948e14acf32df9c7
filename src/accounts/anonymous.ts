// Anonymous boards (DOMAIN.md "Agent onboarding"): an agent with no person behind it provisions
// an account with one Free board; a person takes it over with the claim secret; an account left
// unclaimed for 7 days is deleted by the sweep.
import type { RequestOrigin } from '../audit-row.js';
import type { CommittedAudit } from '../board/committed-audit.js';
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import { newSecret, sameDigest, sha256 } from '../auth/authenticator.js';
import type { ProjectSelector } from '../auth/project-selection.js';
import { DAY_MS } from '../plans.js';
import type { AccountRecord, Store } from '../../store/ports/store.js';
import { checkProjectName, provisionProject } from './projects.js';
import { newReferralCode } from './service.js';
import { ServiceTokens, type PublicToken } from './service-tokens.js';
import { actingAs } from './onboarding.js';
import { CLAIMED, claimable, ensureRoom, finishClaim, holdForClaim, retireAnonymous } from './claim-board.js';
import { withAccountLock } from './account-lock.js';

export const ANONYMOUS_TTL_MS = 7 * DAY_MS;
/** Not a password hash of any scheme: no password verifies against it, so nobody signs in as an anonymous account. */
const NO_PASSWORD = '!anonymous';
const SWEEP_BATCH = 200;

export interface AnonymousBoard {
  accountId: string;
  projectId: string;
  token: PublicToken;
  secret: string;
  claimSecret: string;
  expiresAt: string;
}

export class AnonymousBoards {
  private readonly tokens: ServiceTokens;

  constructor(
    private readonly store: Store,
    selector: ProjectSelector,
    audit: CommittedAudit,
  ) {
    this.tokens = new ServiceTokens(store, selector, audit);
  }

  /**
   * An anonymous account, its one Free board and a workspace token for its agent. The claim
   * secret is `<accountId>.<random>`: looked up by id, its hash compared in constant time.
   */
  async provision(
    input: { projectName?: string; agentName?: string },
    now: number,
    origin: RequestOrigin,
  ): Promise<AnonymousBoard> {
    const name = checkProjectName(input.projectName ?? 'Agent board');
    const accountId = randomUUID();
    const claimSecret = `${accountId}.${newSecret(32)}`;
    const expiresAt = now + ANONYMOUS_TTL_MS;
    // The record first: whatever a crash leaves half made below, the sweep finds and removes.
    await this.store.anonymousAccounts.insert({
      _id: accountId,
      version: 1,
      claimSecretHash: sha256(claimSecret),
      createdAt: now,
      expiresAt,
    });
    const account: AccountRecord = {
      _id: accountId,
      version: 1,
      email: `anonymous-${accountId}@anonymous.invalid`,
      passwordHash: NO_PASSWORD,
      displayName: null,
      defaultProjectId: null,
      emailVerified: false,
      referralCode: newReferralCode(),
      referredBy: null,
      referralMonths: 0,
      createdAt: now,
    };
    await this.store.accounts.insert(account);
    const project = await provisionProject(this.store, accountId, name, now);
    await this.store.accounts.update(accountId, account.version, { defaultProjectId: project._id });
    const issued = await this.tokens.issue(
      actingAs(accountId),
      { name: input.agentName ?? 'agent', scope: 'workspace', projectId: project._id },
      now,
      origin,
    );
    return { accountId, projectId: project._id, ...issued, claimSecret, expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * The person takes every board of the anonymous account over (within their board limit); the
   * account then ceases to exist. Answers the boards' ids. A claim of this person's that was
   * accepted and cut short (a store failure) is finished by calling again with the same secret.
   */
  async claim(claimerId: string, claimSecret: string, now: number, origin: RequestOrigin): Promise<string[]> {
    const dot = claimSecret.indexOf('.');
    const record = dot > 0 ? await this.store.anonymousAccounts.get(claimSecret.slice(0, dot)) : null;
    if (!record || !sameDigest(sha256(claimSecret), record.claimSecretHash))
      throw new AppError(
        'INVALID_LINK_TOKEN',
        'No anonymous account has that claim secret (or it was claimed already).',
      );
    // Under the person's account lock: a creation, transfer or other claim of theirs waits until
    // the boards are theirs, so the room checked is the room there is.
    return withAccountLock(this.store, claimerId, async () => {
      if (record.claim?.by === claimerId) return finishClaim(this.store, record._id, record.claim, now);
      if (!claimable(record, now))
        throw new AppError('INVALID_LINK_TOKEN', 'The anonymous account was claimed already, or its 7 days ran out.');
      const boards = (
        await this.store.projects.find(
          { ownerId: record._id },
          {
            sort: [
              ['createdAt', 1],
              ['_id', 1],
            ],
          },
        )
      ).map((b) => b._id);
      await ensureRoom(this.store, claimerId, record._id, boards);
      const claim = await holdForClaim(this.store, record, { by: claimerId, boards, via: 'claim-secret', origin }, now);
      return finishClaim(this.store, record._id, claim, now);
    });
  }
}

export interface SweepResult {
  /** Anonymous accounts deleted with their boards. */
  accounts: string[];
  boards: string[];
  /** Anonymous accounts whose accepted claim the sweep finished for the person. */
  finished: string[];
}

/**
 * Deletes the anonymous accounts unclaimed past their 7 days (with their boards, through the
 * account deletion), and spent enrollment codes and claim nonces whose time ran out. An accepted
 * claim holds its account for an hour (a version-checked write, so a sweep never deletes it);
 * one its person did not finish by then, the sweep finishes for them.
 */
export async function sweepAnonymous(store: Store, now: number): Promise<SweepResult> {
  const result: SweepResult = { accounts: [], boards: [], finished: [] };
  for (let round = 0; round < 50; round++) {
    const due = await store.anonymousAccounts.find(
      { expiresAt: { $lte: now } },
      {
        sort: [
          ['expiresAt', 1],
          ['_id', 1],
        ],
        limit: SWEEP_BATCH,
      },
    );
    for (const record of due) {
      if (record.claim && (await store.accounts.get(record.claim.by))) {
        await finishClaim(store, record._id, record.claim, now);
        result.finished.push(record._id);
        continue;
      }
      // Marked first (and a claim whose person is gone dropped): a crash after this leaves it due, and the next sweep finishes the job.
      const held = await store.anonymousAccounts.update(record._id, record.version, { claimSecretHash: CLAIMED }, [
        'claim',
      ]);
      if (!held) continue;
      const boards = await retireAnonymous(store, record._id);
      result.accounts.push(record._id);
      result.boards.push(...boards);
    }
    if (due.length < SWEEP_BATCH) break;
  }
  await store.enrollments.deleteMany({ expiresAt: { $lte: now } });
  await store.claimNonces.deleteMany({ expiresAt: { $lte: now } });
  return result;
}
