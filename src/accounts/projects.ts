// Projects (boards) of an account: provisioning, the plan limit, listing with the contract's
// cursor rules, summaries, renaming and deletion. A board created or deleted by a request is
// audited (board.create, board.delete; DOMAIN.md "Operators"), the row following the change.
import { randomUUID } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import { PLANS } from '../plans.js';
import { intInRange } from '../int-in-range.js';
import type { Identity, Role } from '../auth/identity.js';
import { auditRow, type RequestOrigin } from '../audit-row.js';
import type { CommittedAudit } from '../board/committed-audit.js';
import type { BillingService } from '../billing/service.js';
import { modify, newBoardRecord, type MemberRecord, type ProjectRecord, type Store } from '../../store/ports/store.js';
import { withAccountLock } from './account-lock.js';
import { roleOn } from '../auth/project-selection.js';

export const PROJECT_NAME_MAX = 80;
/** The rule a board's name keeps, as every refusal and the API's description say it. */
export const PROJECT_NAME_RULE = `A board name is 1 to ${PROJECT_NAME_MAX} printable characters.`;
export const LIST_DEFAULT = 50;
export const LIST_MAX = 200;

export interface ProjectSummary {
  projectId: string;
  name: string;
  itemCount: number;
  verifyCount: number;
  blockedCount: number;
  agentCount: number;
  lastActivityAt: string;
  owned: boolean;
  role: Role;
  starred: boolean;
}

/** Trimmed, 1 to 80 characters, no control characters. */
export function checkProjectName(name: string): string {
  const trimmed = name.trim();
  // eslint-disable-next-line no-control-regex
  if (!trimmed || [...trimmed].length > PROJECT_NAME_MAX || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw new AppError('INVALID_PROJECT_NAME', PROJECT_NAME_RULE);
  }
  return trimmed;
}

/**
 * A new board of `ownerId`. `importKey`: made by that import, the board stays no one's (no member
 * row, the mark set) until the import's commit hands it over (openImported).
 */
export async function provisionProject(
  store: Store,
  ownerId: string,
  name: string,
  now: number,
  importKey?: string,
): Promise<ProjectRecord> {
  const importing = importKey !== undefined;
  const project: ProjectRecord = {
    _id: randomUUID(),
    version: 1,
    name,
    ownerId,
    plan: 'free',
    createdAt: now,
    lastActivityAt: now,
    ...(importing && { importing: now, importKey }),
  };
  await store.projects.insert(project);
  if (!importing) await insertOwner(store, project._id, ownerId, now);
  await store.boards.insert(newBoardRecord(project._id));
  return project;
}

/** Hands an imported board to its owner once its header is committed: its member row, then the mark cleared. */
export async function openImported(store: Store, projectId: string, ownerId: string, now: number): Promise<void> {
  await insertOwner(store, projectId, ownerId, now);
  await modify(store.projects, projectId, (p) => (p.importing == null ? null : { importing: null }));
}

async function insertOwner(store: Store, projectId: string, ownerId: string, now: number): Promise<void> {
  await store.members.insert({
    _id: `${projectId}:${ownerId}`,
    version: 1,
    projectId,
    accountId: ownerId,
    role: 'owner',
    acceptedAt: now,
  });
}

/**
 * The account's board limit: Pro's when it owns a Pro board, else Free's. `incomingPro`: a Pro
 * board about to become the account's (a transfer) counts as owned.
 */
export async function boardLimit(store: Store, ownerId: string, incomingPro = false): Promise<number> {
  const pro = incomingPro ? 1 : await store.projects.count({ ownerId, plan: 'pro' });
  return PLANS[pro > 0 ? 'pro' : 'free'].boardsPerAccount;
}

/** Refuses with 403 FREE_PROJECT_LIMIT when `ownerId` owns its limit already; call it holding the account's lock. */
export async function ensureRoom(store: Store, ownerId: string, incomingPro = false): Promise<void> {
  const [owned, limit] = await Promise.all([
    store.projects.count({ ownerId }),
    boardLimit(store, ownerId, incomingPro),
  ]);
  if (owned >= limit)
    throw new AppError('FREE_PROJECT_LIMIT', `This account may own ${limit} boards on its plan.`, { limit });
}

/** Who asks for a board change, from which request, and where its audit row goes. */
export interface BoardChange {
  by: Pick<Identity, 'accountId' | 'principal'>;
  origin: RequestOrigin;
  audit: CommittedAudit;
}

/** A new board of the caller's account, within its limit even when several are created at once (on any node); audited. */
export async function createProject(
  store: Store,
  change: BoardChange,
  name: string,
  now: number,
): Promise<ProjectRecord> {
  const checked = checkProjectName(name);
  const ownerId = change.by.accountId;
  const project = await withAccountLock(store, ownerId, async () => {
    await ensureRoom(store, ownerId);
    return provisionProject(store, ownerId, checked, now);
  });
  await change.audit(
    auditRow({
      id: `${project._id}:board.create`,
      at: now,
      actor: change.by.principal,
      action: 'board.create',
      projectId: project._id,
      origin: change.origin,
      data: { name: project.name, ownerId },
    }),
  );
  return project;
}

/**
 * Deletes a board its owner asked to delete (deleteProject), then audits it: the row outlives the
 * board. Its live subscription is cancelled at the provider first (once the board is gone nobody
 * can reach it through the portal): a provider that cannot do it stops the deletion, nothing deleted.
 */
export async function deleteBoard(
  store: Store,
  change: BoardChange,
  project: { id: string; name: string },
  now: number,
  billing: Pick<BillingService, 'cancelBoardSubscription'>,
): Promise<void> {
  await billing.cancelBoardSubscription(project.id, now);
  await deleteProject(store, project.id);
  await change.audit(
    auditRow({
      id: `${project.id}:board.delete`,
      at: now,
      actor: change.by.principal,
      action: 'board.delete',
      projectId: project.id,
      origin: change.origin,
      data: { name: project.name },
    }),
  );
}

export async function renameProject(store: Store, projectId: string, name: string): Promise<ProjectRecord> {
  const checked = checkProjectName(name);
  const renamed = await modify(store.projects, projectId, () => ({ name: checked }));
  if (!renamed) throw new AppError('PROJECT_SCOPE_DENIED');
  return renamed;
}

/** Clears the account's default board when it is `projectId`: it must be a board the account can reach. */
export async function unstar(store: Store, accountId: string, projectId: string): Promise<void> {
  await modify(store.accounts, accountId, (a) =>
    a.defaultProjectId === projectId ? { defaultProjectId: null } : null,
  );
}

/** Removes the board and everything bound to it (no member keeps it as its default board): memberships, invitations, transfers, enrollment codes, claim nonces, restore points, its tokens, its events, its archived stats. */
export async function deleteProject(store: Store, projectId: string): Promise<void> {
  await store.tokens.deleteMany({ boardId: projectId });
  await store.invitations.deleteMany({ projectId });
  await store.transfers.deleteMany({ projectId });
  await store.enrollments.deleteMany({ projectId });
  await store.claimNonces.deleteMany({ projectId });
  await store.restorePoints.deleteMany({ boardId: projectId });
  await store.restorePointParts.deleteMany({ boardId: projectId });
  await store.sharingMails.deleteMany({ projectId });
  // Before the rows that name them go: no member's profile keeps the board as its default.
  for (const { accountId } of await store.members.select({ projectId }, ['accountId']))
    await unstar(store, accountId, projectId);
  await store.members.deleteMany({ projectId });
  await store.events.deleteMany({ boardId: projectId });
  await store.boardStatsDays.deleteMany({ boardId: projectId });
  await store.shouts.deleteMany({ boardId: projectId });
  await store.presence.deleteMany({ boardId: projectId });
  await store.feedback.deleteMany({ boardId: projectId });
  await store.feedbackLedgers.delete(projectId);
  await store.boards.delete(projectId);
  await store.projects.delete(projectId);
}

export async function summarize(
  store: Store,
  project: ProjectRecord,
  member: MemberRecord,
  starredId: string | null,
): Promise<ProjectSummary> {
  // The board's header carries its counts: its items are not read.
  const [[board], agents] = await Promise.all([
    store.boards.select({ _id: project._id }, ['counts']),
    store.tokens.find({ boardId: project._id, revoked: false }),
  ]);
  const counts = countItems(board?.counts ?? {});
  return {
    projectId: project._id,
    name: project.name,
    ...counts,
    agentCount: new Set(agents.map((t) => t.agentId)).size,
    lastActivityAt: new Date(project.lastActivityAt).toISOString(),
    owned: project.ownerId === member.accountId,
    // The board's owner is its ownerId alone (a takeover cut short may leave a member row saying otherwise).
    role: roleOn(project, member.accountId, member) ?? member.role,
    starred: project._id === starredId,
  };
}

function countItems(
  counts: Record<string, number>,
): Pick<ProjectSummary, 'itemCount' | 'verifyCount' | 'blockedCount'> {
  const of = (state: string) => counts[state] ?? 0;
  return {
    itemCount: Object.values(counts).reduce((a, b) => a + b, 0),
    verifyCount: of('awaiting_verify') + of('verifying'),
    blockedCount: of('blocked'),
  };
}

interface Cursor {
  offset: number;
  limit: number;
  total: number;
}

const encodeCursor = (c: Cursor): string =>
  Buffer.from(JSON.stringify([c.offset, c.limit, c.total])).toString('base64url');

function decodeCursor(raw: string): Cursor | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 3 || !value.every((n) => Number.isInteger(n) && n >= 0)) return null;
    const [offset, limit, total] = value as number[];
    return { offset: offset!, limit: limit!, total: total! };
  } catch {
    return null;
  }
}

/** Any other value than an integer 1..200 falls back to the default. */
export const pageSize = (raw: string | undefined): number => intInRange(raw, 1, LIST_MAX, LIST_DEFAULT);

/**
 * Owned and accepted shared boards, oldest membership first. A cursor that is malformed, or
 * whose page size or project count no longer matches, restarts at the first page.
 */
export async function listProjects(
  store: Store,
  accountId: string,
  starredId: string | null,
  limit: number,
  cursor: string | undefined,
) {
  const total = await store.members.count({ accountId });
  const decoded = cursor === undefined ? null : decodeCursor(cursor);
  const usable =
    decoded !== null && decoded.limit === limit && decoded.total === total && decoded.offset < Math.max(total, 1);
  const offset = usable ? decoded.offset : 0;
  const members = await store.members.find(
    { accountId },
    {
      sort: [
        ['acceptedAt', 1],
        ['_id', 1],
      ],
      skip: offset,
      limit,
    },
  );
  const projects = await Promise.all(members.map((m) => store.projects.get(m.projectId)));
  const summaries = await Promise.all(
    members.flatMap((m, i) => (projects[i] ? [summarize(store, projects[i]!, m, starredId)] : [])),
  );
  const next = offset + limit;
  return {
    projects: summaries,
    pagination: {
      nextCursor: next < total ? encodeCursor({ offset: next, limit, total }) : null,
      cursorReset: cursor !== undefined && !usable,
    },
  };
}
