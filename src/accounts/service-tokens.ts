// Service tokens: the secret is shown once and stored as a sha256; the agent principal
// (`agent:<agentId>`) is stable across reissues, so an agent's history stays its own. Issuing,
// reissuing and revoking a token is audited, whoever does it (DOMAIN.md "Operators"): the row
// follows the change, retried until written (src/board/committed-audit.ts), before the answer.
import { randomUUID } from 'node:crypto';
import { AppError, isAppError } from '../errors/app-error.js';
import { newSecret, sha256, TOKEN_PREFIX } from '../auth/authenticator.js';
import { atLeast, type ProjectSelector } from '../auth/project-selection.js';
import type { Identity, Role, TokenScope } from '../auth/identity.js';
import { modify, type Store, type TokenRecord } from '../../store/ports/store.js';
import { auditRow, type RequestOrigin } from '../audit-row.js';
import type { CommittedAudit } from '../board/committed-audit.js';

export const SHOWN_PREFIX_LENGTH = TOKEN_PREFIX.length + 8;
export const MAX_TOKENS_PER_ACCOUNT = 500;

/**
 * How many tokens the account holds, `wanted` more to come. The cap bounds the records an account
 * keeps, revoked ones too; when it stands in the way their records are let go (a revoked token's
 * record answers nothing a missing one does not: 401 INVALID_SERVICE_TOKEN), so "revoke unused ones"
 * frees room. An expired token keeps its record and its room (it answers EXPIRED_TOKEN, and its
 * owner may extend it) until it is revoked.
 */
export async function tokensHeld(store: Pick<Store, 'tokens'>, accountId: string, wanted: number): Promise<number> {
  const held = await store.tokens.count({ accountId });
  if (held + wanted <= MAX_TOKENS_PER_ACCOUNT) return held;
  await store.tokens.deleteMany({ accountId, revoked: true });
  return store.tokens.count({ accountId });
}

export interface IssueInput {
  name: string;
  scope: TokenScope;
  projectId?: string;
  role?: 'admin' | 'member' | 'viewer';
  resources?: string[];
  expiresAt?: string | null;
}

export interface PublicToken {
  id: string;
  name: string;
  prefix: string;
  scope: TokenScope;
  projectId: string | null;
  role: Role | null;
  resources: string[] | null;
  agentId: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function publicToken(t: TokenRecord): PublicToken {
  return {
    id: t._id,
    name: t.name,
    prefix: t.prefix,
    scope: t.scope,
    projectId: t.boardId,
    role: t.role,
    resources: t.resources,
    agentId: t.agentId,
    expiresAt: iso(t.expiresAt),
    lastUsedAt: iso(t.lastUsedAt),
    createdAt: new Date(t.createdAt).toISOString(),
  };
}

const mintSecret = (): { secret: string; secretHash: string; prefix: string } => {
  const secret = `${TOKEN_PREFIX}${newSecret(30)}`;
  return { secret, secretHash: sha256(secret), prefix: secret.slice(0, SHOWN_PREFIX_LENGTH) };
};

function expiryOf(raw: string | null | undefined, now: number): number | null {
  if (raw === undefined || raw === null) return null;
  const at = Date.parse(raw);
  if (Number.isNaN(at))
    throw new AppError('INVALID_INPUT', 'body.expiresAt: must be an ISO 8601 date-time', { field: 'body.expiresAt' });
  if (at <= now)
    throw new AppError('INVALID_INPUT', 'body.expiresAt: must be in the future', { field: 'body.expiresAt' });
  return at;
}

/** An expiry for a token made or changed by `acting` (null: a session), never later than the acting token's own. */
function boundedExpiry(acting: TokenRecord | null, raw: string | null | undefined, now: number): number | null {
  const asked = expiryOf(raw, now);
  if (acting === null || acting.expiresAt === null) return asked;
  if (raw === undefined) return acting.expiresAt;
  if (asked === null || asked > acting.expiresAt) {
    throw new AppError(
      'TOKEN_SCOPE_EXCEEDED',
      `A token cannot make a token that outlives it: expiresAt must be no later than ${new Date(acting.expiresAt).toISOString()}.`,
      { field: 'body.expiresAt' },
    );
  }
  return asked;
}

export class ServiceTokens {
  constructor(
    private readonly store: Store,
    private readonly selector: ProjectSelector,
    private readonly audit: CommittedAudit,
  ) {}

  /**
   * A token acting on tokens is bounded by itself: what it issues expires no later than it does
   * (by default when it does), and it manages only the tokens it issued (and may revoke itself).
   * A session manages every token of its account.
   */
  async issue(
    issuer: Identity,
    input: IssueInput,
    now: number,
    origin: RequestOrigin | null,
  ): Promise<{ token: PublicToken; secret: string }> {
    const acting = await this.actingToken(issuer);
    const { boardId, role, resources } = await this.bindingFor(issuer, input);
    const expiresAt = boundedExpiry(acting, input.expiresAt, now);
    if ((await tokensHeld(this.store, issuer.accountId, 1)) >= MAX_TOKENS_PER_ACCOUNT) {
      throw new AppError(
        'INVALID_INPUT',
        `An account holds at most ${MAX_TOKENS_PER_ACCOUNT} tokens; revoke unused ones.`,
      );
    }
    const { secret, secretHash, prefix } = mintSecret();
    const record: TokenRecord = {
      _id: randomUUID(),
      version: 1,
      accountId: issuer.accountId,
      agentId: randomUUID(),
      secretHash,
      prefix,
      name: input.name,
      scope: input.scope,
      boardId,
      role,
      resources,
      expiresAt,
      lastUsedAt: null,
      revoked: false,
      createdAt: now,
      issuedBy: acting?._id ?? null,
    };
    await this.store.tokens.insert(record);
    await this.audited(issuer, 'token.issue', record, now, origin);
    return { token: publicToken(record), secret };
  }

  /** The account's live tokens; a token sees the ones it issued. */
  async list(actor: Identity): Promise<PublicToken[]> {
    const filter =
      actor.kind === 'token'
        ? { accountId: actor.accountId, revoked: false, issuedBy: actor.tokenId }
        : { accountId: actor.accountId, revoked: false };
    const tokens = await this.store.tokens.find(filter, {
      sort: [
        ['createdAt', 1],
        ['_id', 1],
      ],
      limit: MAX_TOKENS_PER_ACCOUNT,
    });
    return tokens.map(publicToken);
  }

  async update(
    actor: Identity,
    tokenId: string,
    changes: { name?: string; expiresAt?: string | null },
    now: number,
  ): Promise<PublicToken> {
    const acting = await this.actingToken(actor);
    const expiresAt = changes.expiresAt !== undefined ? boundedExpiry(acting, changes.expiresAt, now) : undefined;
    return publicToken(
      await this.mutate(actor, tokenId, 'manage', () => ({
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
      })),
    );
  }

  /** A new secret for the same token id and agent; the old secret stops working at once. */
  async reissue(
    actor: Identity,
    tokenId: string,
    now: number,
    origin: RequestOrigin,
  ): Promise<{ token: PublicToken; secret: string }> {
    const minted = mintSecret();
    const record = await this.mutate(actor, tokenId, 'manage', () => ({
      secretHash: minted.secretHash,
      prefix: minted.prefix,
    }));
    await this.audited(actor, 'token.reissue', record, now, origin);
    return { token: publicToken(record), secret: minted.secret };
  }

  async revoke(actor: Identity, tokenId: string, now: number, origin: RequestOrigin): Promise<void> {
    const record = await this.mutate(actor, tokenId, 'revoke', () => ({ revoked: true }));
    await this.audited(actor, 'token.revoke', record, now, origin);
  }

  /**
   * Revokes a token just issued whose grant (a device approval, an enrollment code) was withdrawn
   * before the token went out: its secret never left the process. Audited as any revocation; one
   * revoked meanwhile (by the withdrawal's own sweep of the account's tokens) is left as it is.
   */
  async withdraw(issuer: Identity, tokenId: string, now: number, origin: RequestOrigin | null): Promise<void> {
    try {
      const record = await this.mutate(issuer, tokenId, 'revoke', () => ({ revoked: true }));
      await this.audited(issuer, 'token.revoke', record, now, origin);
    } catch (e) {
      if (!isAppError(e) || e.code !== 'TOKEN_NOT_FOUND') throw e;
    }
  }

  /** The row of a change to a token, by whoever made it (a token revoking itself included), on the token's board if it has one. */
  private audited(
    actor: Identity,
    action: 'token.issue' | 'token.reissue' | 'token.revoke',
    t: TokenRecord,
    now: number,
    origin: RequestOrigin | null,
  ): Promise<void> {
    const data = { tokenId: t._id, agentId: t.agentId, name: t.name, scope: t.scope, role: t.role, prefix: t.prefix };
    return this.audit(
      auditRow({
        at: now,
        actor: actor.principal,
        action,
        projectId: t.boardId,
        origin,
        target: `token:${t._id}`,
        data,
      }),
    );
  }

  private async mutate(
    actor: Identity,
    tokenId: string,
    what: 'manage' | 'revoke',
    changes: () => Partial<TokenRecord>,
  ): Promise<TokenRecord> {
    const updated = await modify(this.store.tokens, tokenId, (token) => {
      if (token.accountId !== actor.accountId || token.revoked) throw new AppError('TOKEN_NOT_FOUND');
      if (
        actor.kind === 'token' &&
        token.issuedBy !== actor.tokenId &&
        !(what === 'revoke' && token._id === actor.tokenId)
      ) {
        throw new AppError(
          'TOKEN_SCOPE_EXCEEDED',
          token._id === actor.tokenId
            ? 'A token cannot change itself (it may only revoke itself); use a session.'
            : 'A token manages only the tokens it issued; use a session for the others.',
        );
      }
      return changes();
    });
    if (!updated) throw new AppError('TOKEN_NOT_FOUND');
    return updated;
  }

  /** The acting token's record when a token acts (null for a session). */
  private async actingToken(actor: Identity): Promise<TokenRecord | null> {
    if (actor.kind !== 'token') return null;
    const token = await this.store.tokens.get(actor.tokenId);
    if (!token || token.revoked) throw new AppError('INVALID_SERVICE_TOKEN');
    return token;
  }

  /** Workspace and resource tokens bind to one board the issuer administers, at no higher role. */
  private async bindingFor(
    issuer: Identity,
    input: IssueInput,
  ): Promise<Pick<TokenRecord, 'boardId' | 'role' | 'resources'>> {
    if (input.scope === 'account') {
      if (input.projectId !== undefined || input.role !== undefined || input.resources !== undefined) {
        throw new AppError('INVALID_INPUT', 'An account-scoped token takes no projectId, role or resources.');
      }
      return { boardId: null, role: null, resources: null };
    }
    if (input.projectId === undefined)
      throw new AppError('INVALID_INPUT', `body.projectId: required for a ${input.scope} token`, {
        field: 'body.projectId',
      });
    if (input.scope === 'resource' && !input.resources?.length)
      throw new AppError(
        'INVALID_INPUT',
        'body.resources: a resource token names at least one work id or operation group',
        { field: 'body.resources' },
      );
    if (input.scope === 'workspace' && input.resources !== undefined)
      throw new AppError('INVALID_INPUT', 'body.resources: only resource tokens take resources', {
        field: 'body.resources',
      });
    const project = await this.selector.reachable(issuer, input.projectId);
    if (!project) throw new AppError('PROJECT_SCOPE_DENIED');
    const role = input.role ?? 'member';
    if (!atLeast(project.role, 'admin'))
      throw new AppError('ROLE_REQUIRED', 'Issuing board tokens needs the admin or owner role on the board.');
    if (!atLeast(project.role, role))
      throw new AppError('ROLE_REQUIRED', `You cannot issue a token above your own role (${project.role}).`);
    return { boardId: project.id, role, resources: input.scope === 'resource' ? [...new Set(input.resources)] : null };
  }
}
