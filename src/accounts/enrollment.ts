// Enrollment codes (DOMAIN.md "Agent onboarding"): an admin mints a code good for a few agents;
// an agent with nothing but the code gets a workspace token, issued as the code's creator would.
// A code is known by its id (the sha256 it is stored under) and revoked by whoever may mint it.
// Minting and revoking one are audited (who, which board, the code's id: never the code).
import { AppError, isAppError } from '../errors/app-error.js';
import { newSecret, sha256, tokenIdentity } from '../auth/authenticator.js';
import { atLeast, type ProjectSelector, type SelectedProject } from '../auth/project-selection.js';
import type { Identity } from '../auth/identity.js';
import { modify, type EnrollmentRecord, type Filter, type Store } from '../../store/ports/store.js';
import { ServiceTokens, type PublicToken } from './service-tokens.js';
import { actingAs } from './onboarding.js';
import { issuedSince } from './issued-since.js';
import { auditRow, type RequestOrigin } from '../audit-row.js';
import type { CommittedAudit } from '../board/committed-audit.js';

export const ENROLL_CODE_PREFIX = 'agb_enroll_';
/** Live codes a board may hold at once. */
export const MAX_CODES_PER_BOARD = 100;
/** Version-checked attempts at taking a use; each loser re-reads, so this bounds a crowd of redeemers. */
const TAKE_ATTEMPTS = 64;

/**
 * A revoked code keeps its record, with no use left, until it expires: a redemption that took a
 * use before the revocation finds it so before handing its token out. A spent one is kept too
 * (marked spent, not revoked), so a revocation of all its maker issued still reaches the
 * redemption of its last use.
 */
const REVOKED = { usesLeft: 0, spent: false } as const;
const SPENT = { usesLeft: 0, spent: true } as const;
const isRevoked = (record: EnrollmentRecord): boolean => record.usesLeft < 1 && !record.spent;
/** The codes that still admit agents: neither revoked nor expired. */
const live = (now: number): Filter<EnrollmentRecord> => ({ expiresAt: { $gt: now }, usesLeft: { $gt: 0 } });

/** What an enrolled agent may be: whoever holds a code is nobody in particular, so never an admin. */
type EnrollRole = 'member' | 'viewer';
/** The role a code's tokens get: its own, never above member (a code stored before the cap said admin). */
const cappedRole = (role: EnrollmentRecord['role']): EnrollRole => (role === 'viewer' ? 'viewer' : 'member');

export interface MintedCode {
  /** The code's id: how it is listed and revoked. */
  id: string;
  code: string;
  projectId: string;
  role: EnrollRole;
  uses: number;
  expiresAt: string;
}

/** A live code as its board's admins list it: never the code itself. */
export interface CodeView {
  id: string;
  role: EnrollRole;
  usesLeft: number;
  createdAt: string;
  expiresAt: string;
}

const codeView = (r: EnrollmentRecord): CodeView => ({
  id: r._id,
  role: cappedRole(r.role),
  usesLeft: r.usesLeft,
  createdAt: new Date(r.createdAt).toISOString(),
  expiresAt: new Date(r.expiresAt).toISOString(),
});

const revokedCode = () =>
  new AppError('INVALID_LINK_TOKEN', 'The enrollment code was revoked; ask the board’s admin for a new one.');

const invalid = (why = 'The enrollment code is unknown, spent or expired; ask the board’s admin for a new one.') =>
  new AppError('INVALID_LINK_TOKEN', why);

/** The row of a code minted or revoked: keyed by the code and the change, so a retried write is one row. */
function codeRow(
  action: 'enrollment.mint' | 'enrollment.revoke',
  change: { by: Identity; projectId: string; codeId: string; now: number; origin: RequestOrigin },
  data: Record<string, unknown> = {},
) {
  return auditRow({
    id: `${change.projectId}:${action}:${change.codeId}`,
    at: change.now,
    actor: change.by.principal,
    action,
    projectId: change.projectId,
    origin: change.origin,
    target: `enrollment:${change.codeId}`,
    data: { codeId: change.codeId, ...data },
  });
}

export class Enrollments {
  private readonly tokens: ServiceTokens;

  constructor(
    private readonly store: Store,
    private readonly selector: ProjectSelector,
    private readonly audit: CommittedAudit,
  ) {
    this.tokens = new ServiceTokens(store, selector, audit);
  }

  /** A code (shown once; its sha256 is the record's id), by an admin or owner, for member or viewer agents. */
  async mint(
    identity: Identity,
    projectId: string,
    input: { role?: EnrollmentRecord['role']; uses: number; ttlSeconds: number },
    now: number,
    origin: RequestOrigin,
  ): Promise<MintedCode> {
    const role = input.role ?? 'member';
    if (role === 'admin')
      throw new AppError('INVALID_INPUT', 'body.role: an enrollment code admits members or viewers only', {
        field: 'body.role',
      });
    const project = await this.enroller(identity, projectId);
    if (!atLeast(project.role, role))
      throw new AppError('ROLE_REQUIRED', `You cannot enroll agents above your own role (${project.role}).`);
    if ((await this.store.enrollments.count({ projectId, ...live(now) })) >= MAX_CODES_PER_BOARD) {
      throw new AppError(
        'INVALID_INPUT',
        `A board holds at most ${MAX_CODES_PER_BOARD} live enrollment codes; let some expire first.`,
      );
    }
    // A token's code lives no longer than the token (what it issues would expire with it anyway).
    const acting = identity.kind === 'token' ? await this.store.tokens.get(identity.tokenId) : null;
    const expiresAt = Math.min(now + input.ttlSeconds * 1000, acting?.expiresAt ?? Infinity);
    const code = `${ENROLL_CODE_PREFIX}${newSecret(32)}`;
    const createdBy = identity.kind === 'token' ? `token:${identity.tokenId}` : `user:${identity.accountId}`;
    const id = sha256(code);
    await this.store.enrollments.insert({
      _id: id,
      version: 1,
      projectId,
      role,
      usesLeft: input.uses,
      createdBy,
      createdAt: now,
      expiresAt,
    });
    await this.audit(
      codeRow(
        'enrollment.mint',
        { by: identity, projectId, codeId: id, now, origin },
        { role, uses: input.uses, expiresAt },
      ),
    );
    return { id, code, projectId, role, uses: input.uses, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** The board's live codes, newest first, for whoever may mint them. */
  async list(identity: Identity, projectId: string, now: number): Promise<CodeView[]> {
    const project = await this.enroller(identity, projectId);
    const codes = await this.store.enrollments.find(
      { projectId: project.id, ...live(now) },
      {
        sort: [
          ['createdAt', -1],
          ['_id', 1],
        ],
        limit: MAX_CODES_PER_BOARD,
      },
    );
    return codes.map(codeView);
  }

  /**
   * Revokes one live code of the board, whoever made it, for whoever may mint its codes: it admits
   * no agent from now on, not even one redeeming it meanwhile (see redeem). An unknown, spent,
   * expired or already revoked code is ENROLLMENT_CODE_NOT_FOUND.
   */
  async revoke(
    identity: Identity,
    projectId: string,
    codeId: string,
    now: number,
    origin: RequestOrigin,
  ): Promise<void> {
    const project = await this.enroller(identity, projectId);
    const which = (code: EnrollmentRecord) => code.projectId === project.id && code.expiresAt > now && !code.spent;
    if (!(await revokeOne(this.store, codeId, which))) throw new AppError('ENROLLMENT_CODE_NOT_FOUND');
    await this.audit(codeRow('enrollment.revoke', { by: identity, projectId: project.id, codeId, now, origin }));
  }

  /** Who may mint a board's codes, and so list and revoke them: an admin or owner who reaches it. */
  private async enroller(identity: Identity, projectId: string): Promise<SelectedProject> {
    const project = await this.selector.reachable(identity, projectId);
    if (!project) throw new AppError('PROJECT_SCOPE_DENIED');
    if (!atLeast(project.role, 'admin'))
      throw new AppError('ROLE_REQUIRED', 'Enrolling agents needs the admin or owner role on the board.');
    return project;
  }

  /**
   * Spends one use and issues a workspace token named `name` at the code's role. The use is a
   * version-checked decrement (the last one a version-checked delete), so of two redemptions of
   * the last use exactly one gets a token. The token goes out only if the code was not revoked
   * once it was stored (a revocation of the code, or of all its maker issued, that landed since
   * the use was taken gets it revoked instead): none comes from a code after its revoke answered.
   */
  async redeem(
    code: string,
    name: string,
    now: number,
    origin: RequestOrigin,
  ): Promise<{ token: PublicToken; secret: string }> {
    const id = sha256(code);
    const record = await this.store.enrollments.get(id);
    if (!record || record.spent) throw invalid();
    if (isRevoked(record)) throw revokedCode();
    if (record.expiresAt <= now) {
      await this.store.enrollments.delete(id, record.version);
      throw invalid('The enrollment code has expired; ask the board’s admin for a new one.');
    }
    const issuer = await this.creatorOf(record, now);
    await this.takeUse(id, now);
    let issued: { token: PublicToken; secret: string };
    try {
      issued = await this.tokens.issue(
        issuer,
        { name, scope: 'workspace', projectId: record.projectId, role: cappedRole(record.role) },
        now,
        origin,
      );
    } catch (e) {
      await this.giveBack(record).catch(() => undefined);
      // The redeemer holds nothing but the code: the maker's circumstances (role, token, token count) are not theirs to read.
      if (
        isAppError(e) &&
        ['ROLE_REQUIRED', 'PROJECT_SCOPE_DENIED', 'INVALID_SERVICE_TOKEN', 'TOKEN_SCOPE_EXCEEDED'].includes(e.code)
      )
        throw invalid('Whoever made this code can no longer admit agents to the board; ask its admin for a new one.');
      if (isAppError(e) && e.code === 'INVALID_INPUT')
        throw invalid('This code cannot admit more agents right now; ask the board’s admin.');
      throw e;
    }
    // Spent (by this use or later ones) and revoked are both kept until it expires, so a revocation is seen here.
    const after = await this.store.enrollments.get(id).catch(async (e: unknown) => {
      await this.tokens.withdraw(issuer, issued.token.id, now, origin).catch(() => undefined);
      throw e;
    });
    // A revocation of all its maker issued that began once the code was made (its own pass may
    // have missed a code inserted late) gets the token withdrawn too.
    const stands = after && !isRevoked(after) && (await issuedSince(this.store, issuer.accountId, record.createdAt));
    if (!stands) {
      await this.tokens.withdraw(issuer, issued.token.id, now, origin);
      throw revokedCode();
    }
    return issued;
  }

  /** The creator as it stands now: a person whose account is not deleted, or an account token still live. */
  private async creatorOf(record: EnrollmentRecord, now: number): Promise<Identity> {
    if (record.createdBy.startsWith('user:')) {
      const accountId = record.createdBy.slice('user:'.length);
      const account = await this.store.accounts.get(accountId);
      if (!account || account.deletedAt != null)
        throw invalid('Whoever made this code has deleted their account; ask the board’s admin for a new code.');
      return actingAs(accountId);
    }
    const token = await this.store.tokens.get(record.createdBy.slice('token:'.length));
    if (!token || token.revoked || (token.expiresAt !== null && token.expiresAt <= now))
      throw invalid('The token that made this code was revoked or has expired; ask the board’s admin for a new code.');
    return tokenIdentity(token);
  }

  private async takeUse(id: string, now: number): Promise<void> {
    for (let attempt = 0; attempt < TAKE_ATTEMPTS; attempt++) {
      const current = await this.store.enrollments.get(id);
      if (current && isRevoked(current)) throw revokedCode();
      if (!current || current.spent)
        throw invalid('The enrollment code has no uses left; ask the board’s admin for a new one.');
      if (current.expiresAt <= now)
        throw invalid('The enrollment code has expired; ask the board’s admin for a new one.');
      const taken =
        current.usesLeft === 1
          ? (await this.store.enrollments.update(id, current.version, SPENT)) !== null
          : (await this.store.enrollments.update(id, current.version, { usesLeft: current.usesLeft - 1 })) !== null;
      if (taken) return;
    }
    throw new AppError('BOARD_BUSY', 'Too many agents are redeeming this code at once; retry in a moment.', undefined, {
      'retry-after': '1',
    });
  }

  /**
   * A use taken for a token that was then refused goes back to the code, unless it was revoked
   * since (a spent code's record is kept, so a revocation after its last use is not undone here).
   */
  private async giveBack(record: EnrollmentRecord): Promise<void> {
    for (let attempt = 0; attempt < TAKE_ATTEMPTS; attempt++) {
      const current = await this.store.enrollments.get(record._id);
      if (!current || isRevoked(current)) return;
      if (
        await this.store.enrollments.update(record._id, current.version, {
          usesLeft: current.usesLeft + 1,
          spent: false,
        })
      )
        return;
    }
  }
}

/** Revokes the code `id` if it is not already and `which` holds of it: answers whether this call revoked it. */
async function revokeOne(store: Store, id: string, which: (code: EnrollmentRecord) => boolean): Promise<boolean> {
  let revokedHere = false;
  const after = await modify(store.enrollments, id, (code) => {
    revokedHere = !isRevoked(code) && which(code);
    return revokedHere ? REVOKED : null;
  });
  // An attempt that lost to a delete (the code expired and swept, its board deleted) leaves the flag set and no code.
  return after !== null && revokedHere;
}

/**
 * Revokes the codes matching `filter` not revoked yet, as `Enrollments.revoke` does one, spent ones
 * too (a redemption of the last use may not have handed its token out yet). Answers how many.
 */
export async function revokeCodes(store: Store, filter: Filter<EnrollmentRecord>): Promise<number> {
  let revoked = 0;
  const [live, spent] = await Promise.all([
    store.enrollments.select({ ...filter, usesLeft: { $gt: 0 } }, ['_id']),
    store.enrollments.select({ ...filter, spent: true }, ['_id']),
  ]);
  for (const { _id } of [...live, ...spent]) if (await revokeOne(store, _id, () => true)) revoked++;
  return revoked;
}
