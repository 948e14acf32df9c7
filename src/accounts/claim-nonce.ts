// Handing one anonymous board to a person (DOMAIN.md "Agent onboarding"): the board's agent asks
// for a single-use nonce (15 minutes) and gives the person a link; the person's claim spends it.
import { AppError } from '../errors/app-error.js';
import { newSecret, sha256 } from '../auth/authenticator.js';
import type { Identity } from '../auth/identity.js';
import type { ProjectSelector } from '../auth/project-selection.js';
import type { Store } from '../../store/ports/store.js';
import { claimable, ensureRoom, holdForClaim, retireWhenEmpty, takeBoard } from './claim-board.js';
import { glanceOf, type BoardGlance } from './onboarding.js';

export const NONCE_TTL_MS = 15 * 60_000;

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

  /** A nonce for a board of an anonymous account, asked by its owner's credential (its agent's token). */
  async mint(identity: Identity, projectId: string, now: number): Promise<MintedNonce> {
    const project = await this.selector.reachable(identity, projectId);
    if (!project) throw new AppError('PROJECT_SCOPE_DENIED');
    if (!project.owned) throw new AppError('ROLE_REQUIRED', 'Only the board’s owner, or an agent token its owner issued for it, may hand the board over.');
    const anonymous = await this.store.anonymousAccounts.get(identity.accountId);
    if (!claimable(anonymous, now)) throw new AppError('BOARD_NOT_ANONYMOUS');
    const nonce = newSecret(32);
    const expiresAt = now + NONCE_TTL_MS;
    await this.store.claimNonces.insert({ _id: sha256(nonce), version: 1, projectId, createdBy: identity.principal, createdAt: now, expiresAt });
    return { projectId, nonce, link: `${this.publicUrl}/boards/${projectId}/claim#${nonce}`, expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * The person takes the board over (within their board limit), spending the nonce; with
   * `preview`, everything is checked and nothing spent or changed. Answers the board as it was.
   */
  async claim(claimerId: string, projectId: string, nonce: string, now: number, preview: boolean): Promise<BoardGlance> {
    const id = sha256(nonce);
    const record = await this.store.claimNonces.get(id);
    if (!record || record.projectId !== projectId) throw new AppError('INVALID_LINK_TOKEN', 'This claim link is unknown, or was used already.');
    if (record.expiresAt <= now) throw new AppError('INVALID_LINK_TOKEN', 'This claim link has expired (claim links last 15 minutes).');
    const project = await this.store.projects.get(projectId);
    const anonymous = project ? await this.store.anonymousAccounts.get(project.ownerId) : null;
    if (!project || !claimable(anonymous, now)) throw new AppError('INVALID_LINK_TOKEN', 'This board was taken over already, or is no longer claimable.');
    await ensureRoom(this.store, claimerId, 1);
    const glance = await glanceOf(this.store, projectId);
    if (preview) return glance;
    if (!(await this.store.claimNonces.delete(id, record.version))) throw new AppError('INVALID_LINK_TOKEN', 'This claim link was used meanwhile.');
    await holdForClaim(this.store, anonymous, now, false);
    if (!(await takeBoard(this.store, projectId, anonymous._id, claimerId, now, 'nonce'))) throw new AppError('INVALID_LINK_TOKEN', 'This board was claimed meanwhile.');
    await retireWhenEmpty(this.store, anonymous._id);
    return glance;
  }
}
