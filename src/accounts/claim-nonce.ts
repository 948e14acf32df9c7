// Handing one anonymous board to a person (DOMAIN.md "Agent onboarding"): the board's agent asks
// for a single-use nonce (15 minutes) and gives the person a link; the person's claim spends it.
import type { RequestOrigin } from '../audit-row.js';
import { AppError } from '../errors/app-error.js';
import { newSecret, sha256 } from '../auth/authenticator.js';
import type { Identity } from '../auth/identity.js';
import type { ProjectSelector } from '../auth/project-selection.js';
import type { AnonymousAccountRecord, ProjectRecord, Store } from '../../store/ports/store.js';
import { anonymousOwnerOf, claimable, ensureRoom, finishClaim, holdForClaim } from './claim-board.js';
import { withAccountLock } from './account-lock.js';
import { glanceOf, type BoardGlance } from './onboarding.js';

export const NONCE_TTL_MS = 15 * 60_000;
/** Claim links a board holds at once; a new one replaces the oldest, so an agent asking again and again stores nothing more. */
export const MAX_NONCES_PER_BOARD = 5;

export interface MintedNonce {
  projectId: string;
  nonce: string;
  link: string;
  expiresAt: string;
}

export class ClaimNonces {
  constructor(
    private readonly store: Store,
    private readonly selector: ProjectSelector,
    private readonly publicUrl: string,
  ) {}

  /** A nonce for a board of an anonymous account, asked by its owner's credential (its agent's token); the board's oldest goes past MAX_NONCES_PER_BOARD. */
  async mint(identity: Identity, projectId: string, now: number): Promise<MintedNonce> {
    const project = await this.selector.reachable(identity, projectId);
    if (!project) throw new AppError('PROJECT_SCOPE_DENIED');
    if (!project.owned)
      throw new AppError(
        'ROLE_REQUIRED',
        'Only the board’s owner, or an agent token its owner issued for it, may hand the board over.',
      );
    const anonymous = await this.store.anonymousAccounts.get(identity.accountId);
    if (!claimable(anonymous, now)) throw new AppError('BOARD_NOT_ANONYMOUS');
    const nonce = newSecret(32);
    const expiresAt = now + NONCE_TTL_MS;
    const id = sha256(nonce);
    await this.store.claimNonces.insert({
      _id: id,
      version: 1,
      projectId,
      createdBy: identity.principal,
      createdAt: now,
      expiresAt,
    });
    // Oldest first, the new one aside (concurrent mints may share a millisecond): what lies beyond the newest others goes.
    const others = (
      await this.store.claimNonces.select({ projectId }, ['createdAt'], {
        sort: [
          ['createdAt', 1],
          ['_id', 1],
        ],
      })
    ).filter((n) => n._id !== id);
    for (const old of others.slice(0, Math.max(0, others.length - (MAX_NONCES_PER_BOARD - 1))))
      await this.store.claimNonces.delete(old._id);
    return {
      projectId,
      nonce,
      link: `${this.publicUrl}/boards/${projectId}/claim#${nonce}`,
      expiresAt: new Date(expiresAt).toISOString(),
    };
  }

  /**
   * The person takes the board over (within their board limit), spending the nonce; with
   * `preview`, everything is checked and nothing spent or changed. Answers the board as it was.
   * A claim of this person's that was accepted and cut short (a store failure) is finished by
   * calling again.
   */
  async claim(
    claimerId: string,
    projectId: string,
    nonce: string,
    now: number,
    preview: boolean,
    origin: RequestOrigin,
  ): Promise<BoardGlance> {
    if (preview) return this.take(claimerId, projectId, nonce, now, true, origin);
    // Under the person's account lock, as every change to what an account owns (see AnonymousBoards.claim).
    return withAccountLock(this.store, claimerId, () => this.take(claimerId, projectId, nonce, now, false, origin));
  }

  private async take(
    claimerId: string,
    projectId: string,
    nonce: string,
    now: number,
    preview: boolean,
    origin: RequestOrigin,
  ): Promise<BoardGlance> {
    const project = await this.store.projects.get(projectId);
    const anonymous = project ? await anonymousOwnerOf(this.store, project) : null;
    const resumed =
      anonymous?.claim?.by === claimerId && anonymous.claim.boards.includes(projectId)
        ? { from: anonymous, claim: anonymous.claim }
        : null;
    const from = resumed?.from ?? (await this.checked(claimerId, project, anonymous, nonce, now));
    const glance = await glanceOf(this.store, projectId);
    if (preview) return glance;
    const claim =
      resumed?.claim ??
      (await holdForClaim(this.store, from, { by: claimerId, boards: [projectId], via: 'nonce', origin }, now));
    if (!(await finishClaim(this.store, from._id, claim, now)).includes(projectId))
      throw new AppError('INVALID_LINK_TOKEN', 'This board was claimed meanwhile.');
    return glance;
  }

  /** The nonce is live and for this board, the board still anonymous and claimable, and the person has room for it and its tokens: answers its anonymous account. */
  private async checked(
    claimerId: string,
    project: ProjectRecord | null,
    anonymous: AnonymousAccountRecord | null,
    nonce: string,
    now: number,
  ): Promise<AnonymousAccountRecord> {
    const record = await this.store.claimNonces.get(sha256(nonce));
    if (!project || !record || record.projectId !== project._id)
      throw new AppError('INVALID_LINK_TOKEN', 'This claim link is unknown, or was used already.');
    if (record.expiresAt <= now)
      throw new AppError('INVALID_LINK_TOKEN', 'This claim link has expired (claim links last 15 minutes).');
    if (!claimable(anonymous, now) || project.ownerId !== anonymous._id)
      throw new AppError('INVALID_LINK_TOKEN', 'This board was taken over already, or is no longer claimable.');
    await ensureRoom(this.store, claimerId, anonymous._id, [project._id]);
    return anonymous;
  }
}
