// Board sharing (DOMAIN.md "Sharing"): what invitations, members and transfers have in common: the
// board as the caller reaches it (read fresh on every call, never cached), the forms of ids, the
// seven-day window, the notices that make a member's change take effect on every node, and the
// audit row each change of who can act leaves (DOMAIN.md "Operators"), once the change is made.
import { AppError } from '../errors/app-error.js';
import {
  atLeast,
  PROJECT_ID,
  requireRole,
  type ProjectSelector,
  type SelectedProject,
} from '../auth/project-selection.js';
import type { Identity, Role } from '../auth/identity.js';
import type { MembershipNotice, RevokedNotice } from '../auth/access-notices.js';
import type { Mailer } from '../mail/mailer.js';
import type { Store } from '../../store/ports/store.js';
import { auditRow, type RequestOrigin } from '../audit-row.js';
import type { CommittedAudit } from '../board/committed-audit.js';

/** Invitation links and transfers stay open this long (a resend restarts it). */
export const SHARING_TTL_MS = 7 * 24 * 3600_000;
/** Closed invitations and transfers are kept this long past their expiry, then pruned. */
export const KEEP_CLOSED_MS = 30 * 24 * 3600_000;
/** The form of the server's own ids (invitations, transfers, accounts): anything else names nothing. */
export const RECORD_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What the sharing rules need: the store, the selector, mail, and the cross-node notices. */
export interface SharingPorts {
  store: Store;
  selector: Pick<ProjectSelector, 'reachable'>;
  mailer: Mailer;
  /** Where links in mail point (no trailing slash). */
  publicUrl: string;
  /** Every node unsubscribes the account's sockets from the board. */
  membership: (notice: MembershipNotice) => void;
  /** Every node closes the revoked token's sockets. */
  revoke: (notice: RevokedNotice) => void;
  /** Where the rows of the changes go (retried until written: the change stands). */
  audit: CommittedAudit;
}

export type SharingAction =
  | 'invitation.create'
  | 'invitation.revoke'
  | 'invitation.accept'
  | 'member.role'
  | 'member.remove'
  | 'transfer.offer'
  | 'transfer.accept';

/** Who makes a sharing change, when, and through which request (originOf: an operator acting as the account is named in it). */
export interface SharingChange {
  by: Identity;
  now: number;
  origin: RequestOrigin;
}

/** The row of a sharing change; `key` makes its id, fixed by the change, so a change finished by a retry is not written twice. */
export function sharingRow(
  change: SharingChange,
  row: { action: SharingAction; projectId: string; key: string; target: string; data: Record<string, unknown> },
) {
  const { action, projectId, key, target, data } = row;
  return auditRow({
    id: `${projectId}:${action}:${key}`,
    at: change.now,
    actor: change.by.principal,
    action,
    projectId,
    origin: change.origin,
    target,
    data,
  });
}

/** The board named in a path, as the credential reaches it now, with at least `need`. */
export async function boardFor(
  ports: Pick<SharingPorts, 'selector'>,
  identity: Identity,
  projectId: string,
  need: Role,
): Promise<SelectedProject> {
  if (!PROJECT_ID.test(projectId))
    throw new AppError('INVALID_PROJECT_ID', 'projectId must be 1 to 64 letters, digits, "-" or "_".');
  const project = await ports.selector.reachable(identity, projectId);
  if (!project)
    throw new AppError('PROJECT_SCOPE_DENIED', 'That board does not exist or this credential cannot reach it.');
  requireRole(project.role, need);
  return project;
}

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Whether `role` sits strictly below `than`. */
export const below = (role: Role, than: Role): boolean => !atLeast(role, than);
