// The device flow (RFC 8628, DOMAIN.md "Agent onboarding"): an agent starts a grant, a person who
// administers a board approves or denies it by its user code, and the agent's poll receives one
// workspace token for a new agent on that board. Codes are stored only as digests (device-codes.ts);
// every move of a grant is a version-checked update, and the token is minted only by the poll that
// moved the grant from approved to minting, so it goes out once and its secret is never stored. It
// goes out only once that poll moved the grant on to delivered: a revocation of all the approver
// issued (credentials.ts) denies a minting grant too, and the poll then revokes what it minted.
import { auditRow, type RequestOrigin } from '../audit-row.js';
import { randomUUID } from 'node:crypto';
import { AppError, isAppError } from '../errors/app-error.js';
import type { Budget, RateLimiter, WindowSpec } from '../ratelimit/limiter.js';
import { atLeast, type ProjectSelector } from '../auth/project-selection.js';
import type { SessionIdentity } from '../auth/identity.js';
import {
  DuplicateKeyError,
  modify,
  type Changes,
  type DeviceGrantRecord,
  type Store,
} from '../../store/ports/store.js';
import type { PublicToken, ServiceTokens } from './service-tokens.js';
import { deviceCodeHash, newDeviceCode, newUserCode, normalUserCode, shownUserCode } from './device-codes.js';
import { issuedSince } from './issued-since.js';

export const DEVICE_INTERVAL_S = 5;
export const DEVICE_TTL_MS = 600_000;
/** RFC 8628 §3.5: each slow_down adds 5 s to the grant's interval; we stop growing it at a minute. */
export const SLOW_DOWN_STEP_S = 5;
export const MAX_INTERVAL_S = 60;
const USER_CODE_ATTEMPTS = 5;
const POLL_ATTEMPTS = 8;

export interface StartInput {
  clientName: string;
  projectId?: string;
}

export interface StartReply {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  interval: number;
  expiresIn: number;
}

export interface ApproveInput {
  userCode: string;
  projectId: string;
  approve: boolean;
}

export interface PendingRequest {
  userCode: string;
  clientName: string;
  requestedProjectId: string | null;
  expiresAt: string;
  /** Days the agent's token will work once issued (null: until revoked). */
  tokenLifetimeDays: number | null;
}

const notFound = () => new AppError('DEVICE_CODE_NOT_FOUND');

/**
 * User codes a signed-in account may get wrong in an hour, looking up or approving (RFC 8628
 * §5.1): beyond, its lookups and approvals are refused until the window turns, right codes too,
 * so a guesser learns nothing more. The per-address budget bounds a guesser across accounts.
 */
export const DEVICE_MISSES_PER_HOUR = 10;
const missBudget = (accountId: string): WindowSpec => ({
  key: `device-miss:${accountId}`,
  limit: DEVICE_MISSES_PER_HOUR,
  windowMs: 3_600_000,
});

export class DeviceFlow {
  constructor(
    private readonly store: Store,
    private readonly selector: ProjectSelector,
    private readonly tokens: ServiceTokens,
    private readonly publicUrl: string,
    /** The stored form of a normalised user code (an HMAC under a server key). */
    private readonly userCodeDigest: (userCode: string) => string,
    private readonly limiter: RateLimiter,
    /** How long an issued token works, in days (null: until revoked); the approver extends or revokes it as any token they issued. */
    private readonly tokenDays: number | null,
  ) {}

  /** A new pending grant; the requested board is only a hint for the approver (nothing about it is checked or revealed). */
  async start(input: StartInput, now: number): Promise<StartReply> {
    const deviceCode = newDeviceCode();
    for (let attempt = 1; ; attempt++) {
      const userCode = newUserCode();
      const grant: DeviceGrantRecord = {
        _id: deviceCodeHash(deviceCode),
        version: 1,
        userCodeHash: this.userCodeDigest(userCode),
        clientName: input.clientName,
        projectId: input.projectId ?? null,
        status: 'pending',
        approvedBy: null,
        approvedProjectId: null,
        createdAt: now,
        expiresAt: now + DEVICE_TTL_MS,
        lastPolledAt: null,
        interval: DEVICE_INTERVAL_S,
      };
      try {
        await this.store.deviceGrants.insert(grant);
      } catch (e) {
        // A user code still held by a live grant: draw another.
        if (e instanceof DuplicateKeyError && attempt < USER_CODE_ATTEMPTS) continue;
        throw e;
      }
      const verificationUri = `${this.publicUrl}/device`;
      return {
        deviceCode,
        userCode: shownUserCode(userCode),
        verificationUri,
        verificationUriComplete: `${verificationUri}?code=${shownUserCode(userCode)}`,
        interval: DEVICE_INTERVAL_S,
        expiresIn: DEVICE_TTL_MS / 1000,
      };
    }
  }

  /** What a pending user code asks for, so the person approving sees which agent it is. */
  async lookup(person: SessionIdentity, userCode: string, now: number): Promise<PendingRequest> {
    const grant = await this.guessed(person, now, () => this.pending(userCode, now));
    return {
      userCode: shownUserCode(normalUserCode(userCode)!),
      clientName: grant.clientName,
      requestedProjectId: grant.projectId,
      expiresAt: new Date(grant.expiresAt).toISOString(),
      tokenLifetimeDays: this.tokenDays,
    };
  }

  /**
   * Approves or denies a pending grant for `projectId`, where the person must be allowed to issue
   * agent tokens (admin or owner). The board is checked before the code.
   */
  async approve(
    person: SessionIdentity,
    input: ApproveInput,
    now: number,
    origin: RequestOrigin,
  ): Promise<{ status: 'approved' | 'denied'; clientName: string; projectId: string }> {
    const project = await this.selector.reachable(person, input.projectId);
    if (!project) throw new AppError('PROJECT_SCOPE_DENIED', 'That board does not exist or you cannot reach it.');
    if (!atLeast(project.role, 'admin'))
      throw new AppError(
        'ROLE_REQUIRED',
        'Approving an agent issues it a token on the board: that needs the admin or owner role there.',
      );
    const status: 'approved' | 'denied' = input.approve ? 'approved' : 'denied';
    const decided = await this.guessed(person, now, async () => {
      const found = await this.pending(input.userCode, now);
      const made = await modify(this.store.deviceGrants, found._id, (grant) => {
        if (grant.status !== 'pending' || now >= grant.expiresAt) throw notFound();
        return { status, approvedBy: person.accountId, approvedProjectId: project.id, approvedAt: now };
      });
      if (!made) throw notFound();
      return made;
    });
    // Keyed by a fresh id: a caller may send the same X-Request-Id twice, and the decision is already made.
    await this.store.audit.insert(
      auditRow({
        id: `${project.id}:device:${randomUUID()}`,
        at: now,
        actor: person.principal,
        action: `device.${status}`,
        projectId: project.id,
        origin,
        data: { clientName: decided.clientName, requestedProjectId: decided.projectId },
      }),
    );
    return { status, clientName: decided.clientName, projectId: project.id };
  }

  /** RFC 8628 §3.5: pending, slow down, denied, expired, or (once) the token. */
  async poll(deviceCode: string, now: number, origin: RequestOrigin): Promise<{ token: PublicToken; secret: string }> {
    const id = deviceCodeHash(deviceCode);
    for (let attempt = 0; attempt < POLL_ATTEMPTS; attempt++) {
      const grant = await this.store.deviceGrants.get(id);
      if (!grant || grant.status === 'minting' || grant.status === 'delivered')
        throw new AppError('INVALID_DEVICE_CODE');
      if (grant.status === 'denied') throw new AppError('ACCESS_DENIED');
      if (now >= grant.expiresAt)
        throw new AppError('EXPIRED_TOKEN', 'The device code has expired (10 minutes); start a new device flow.');
      if (grant.status === 'approved') {
        const won = await this.store.deviceGrants.update(id, grant.version, { status: 'minting', lastPolledAt: now });
        if (won) return this.deliver(won, now, origin);
        continue; // another poll moved it first: read what it left
      }
      const interval = grant.interval;
      const tooSoon = grant.lastPolledAt !== null && now - grant.lastPolledAt < interval * 1000;
      const next = tooSoon ? Math.min(interval + SLOW_DOWN_STEP_S, MAX_INTERVAL_S) : interval;
      const changes: Changes<DeviceGrantRecord> = { lastPolledAt: now, interval: next };
      // A concurrent poll or an approval moved the version: read again (a concurrent poll makes this one too soon).
      if (!(await this.store.deviceGrants.update(id, grant.version, changes))) continue;
      const details = { interval: next, expiresIn: Math.ceil((grant.expiresAt - now) / 1000) };
      if (tooSoon)
        throw new AppError(
          'SLOW_DOWN',
          `Polled faster than every ${interval} s: wait ${next} s between polls from now on.`,
          details,
        );
      throw new AppError('AUTHORIZATION_PENDING', `Not approved yet: poll again in ${next} s.`, details);
    }
    throw new AppError(
      'SLOW_DOWN',
      'This device code is being polled concurrently: poll from one place, at the interval.',
      { interval: DEVICE_INTERVAL_S },
    );
  }

  /**
   * Mints the token on behalf of the approver, as their session would: ServiceTokens checks their
   * role on the board again now, and an approver whose account is deleted since is refused. A right lost since the approval turns the grant into a denial; a
   * failure to mint moves it back from minting to approved (version-checked: only this poll
   * moved it), so the next poll delivers. The token goes out only when the grant is still this
   * poll's to deliver (minting at the version the poll left it): a revocation that denied it
   * meanwhile gets the token revoked instead.
   */
  private async deliver(
    grant: DeviceGrantRecord,
    now: number,
    origin: RequestOrigin,
  ): Promise<{ token: PublicToken; secret: string }> {
    // A deletion denies what its account approved, but one may land between approval and this poll.
    const account = await this.store.accounts.get(grant.approvedBy!);
    if (!account || account.deletedAt != null) {
      await this.store.deviceGrants.update(grant._id, grant.version, { status: 'denied' }).catch(() => null);
      throw new AppError('ACCESS_DENIED', 'The person who approved this device has deleted their account.');
    }
    // No session is involved at poll time: nothing below reads sessionId.
    const approver: SessionIdentity = {
      kind: 'session',
      principal: `user:${grant.approvedBy!}`,
      accountId: grant.approvedBy!,
      sessionId: 'device-approval',
    };
    let issued: { token: PublicToken; secret: string };
    try {
      const expiresAt = this.tokenDays === null ? null : new Date(now + this.tokenDays * 86_400_000).toISOString();
      issued = await this.tokens.issue(
        approver,
        { name: grant.clientName, scope: 'workspace', projectId: grant.approvedProjectId!, role: 'member', expiresAt },
        now,
        origin,
      );
    } catch (e) {
      if (!isAppError(e) || !['PROJECT_SCOPE_DENIED', 'ROLE_REQUIRED', 'INVALID_INPUT'].includes(e.code)) {
        // Not minted (the store failed): the grant goes back to approved, so the agent's next poll delivers.
        await this.store.deviceGrants.update(grant._id, grant.version, { status: 'approved' }).catch(() => null);
        throw e;
      }
      await this.store.deviceGrants.update(grant._id, grant.version, { status: 'denied' }).catch(() => null);
      throw new AppError('ACCESS_DENIED', `The approver can no longer issue a token on that board: ${e.message}`);
    }
    const delivered = await this.store.deviceGrants
      .update(grant._id, grant.version, { status: 'delivered' })
      .catch(async (e: unknown) => {
        // Not known to be delivered: the secret stays here, and the grant goes back to approved (unless it moved on).
        await this.tokens.withdraw(approver, issued.token.id, now, origin).catch(() => undefined);
        await this.store.deviceGrants.update(grant._id, grant.version, { status: 'approved' }).catch(() => null);
        throw e;
      });
    // A revocation of all the approver issued that began once the approval was made (its own pass
    // may have missed an approval landing late) gets the token withdrawn too.
    const approvedAt = grant.approvedAt ?? grant.createdAt;
    if (!delivered || !(await issuedSince(this.store, grant.approvedBy!, approvedAt))) {
      await this.tokens.withdraw(approver, issued.token.id, now, origin);
      throw new AppError(
        'ACCESS_DENIED',
        'The person who approved this device revoked everything they had issued before the token went out.',
      );
    }
    return issued;
  }

  /**
   * Runs a step that names a user code: refused while the account's misses are spent. The miss is
   * taken before the lookup and given back when the code is found (or the step fails otherwise), so
   * concurrent guesses cannot all pass one check and be looked up past the budget.
   */
  private async guessed<T>(person: SessionIdentity, now: number, step: () => Promise<T>): Promise<T> {
    const spec = missBudget(person.accountId);
    const drawn = await this.limiter.consume(spec, now);
    if (!drawn.allowed) throw tooManyMisses(drawn, now);
    let missed = false;
    try {
      return await step();
    } catch (e) {
      missed = isAppError(e) && e.code === 'DEVICE_CODE_NOT_FOUND';
      throw e;
    } finally {
      // A refund that fails leaves one miss too many counted: no reason to fail the step.
      if (!missed) await this.limiter.refund(spec, now).catch(() => undefined);
    }
  }

  private async pending(userCode: string, now: number): Promise<DeviceGrantRecord> {
    const code = normalUserCode(userCode);
    if (code === null) throw notFound();
    const grant = await this.store.deviceGrants.findOne({ userCodeHash: this.userCodeDigest(code) });
    if (!grant || grant.status !== 'pending' || now >= grant.expiresAt) throw notFound();
    return grant;
  }
}

function tooManyMisses(budget: Budget, now: number): AppError {
  const retryAfter = Math.max(1, budget.resetAt - Math.floor(now / 1000));
  return new AppError(
    'RATE_LIMITED',
    `${DEVICE_MISSES_PER_HOUR} user codes not found within the hour from this account: retry in ${retryAfter} s, with the code exactly as the agent shows it.`,
    { limit: budget.limit, resetAt: budget.resetAt },
    { 'Retry-After': String(retryAfter) },
  );
}
