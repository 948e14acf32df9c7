// Project selection for project-scoped operations: `?projectId=`, else the credential's own board
// (workspace and resource tokens), else the account's starred default. Checked against accepted
// membership: a malformed id is INVALID_PROJECT_ID, an unreachable one PROJECT_SCOPE_DENIED, and
// one whose owner's account is deleted BOARD_CLOSED to whoever would reach it otherwise (see closed).
// Who owns a board is projects.ownerId and nothing else (see roleOn).
import { AppError } from '../errors/app-error.js';
import type { PlanName } from '../plans.js';
import type { AccountRecord, MemberRecord, ProjectRecord, ReadsById } from '../../store/ports/store.js';
import { sharedIdentity, type Identity, type Role } from './identity.js';
import { andThen, both, type Maybe } from '../../store/ports/maybe.js';

export const PROJECT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface SelectedProject {
  id: string;
  name: string;
  role: Role;
  plan: PlanName;
  owned: boolean;
}

/** required: a project must be selected; owned: and the caller must own it (billing); optional: none is fine. */
export type SelectionMode = 'required' | 'owned' | 'optional';

/** Only reads by id: the store's, or the identity cache's in front of it (src/auth/identity-cache.ts), which answers now what it holds. */
interface SelectionPorts {
  accounts: ReadsById<AccountRecord>;
  projects: ReadsById<ProjectRecord>;
  members: ReadsById<MemberRecord>;
}

type Lookup = SelectedProject | typeof CLOSED | null;

export class ProjectSelector {
  /**
   * Each identity's last lookup, with the records it was worked out from: while the identity cache
   * hands out the same records (and the authenticator the same identity), a credential's requests
   * to its board find their selection again instead of making it anew.
   */
  private readonly looked = new WeakMap<
    Identity,
    { projectId: string; memberId: string; project: ProjectRecord | null; member: MemberRecord | null; found: Lookup }
  >();

  constructor(private readonly store: SelectionPorts) {}

  /** The selected project (now, when every record it needs is held), or throws the code that refuses it. */
  select(identity: Identity, requested: string | undefined, mode: SelectionMode): Maybe<SelectedProject | null> {
    if (requested !== undefined) {
      if (!PROJECT_ID.test(requested))
        throw new AppError('INVALID_PROJECT_ID', 'projectId must be 1 to 64 letters, digits, "-" or "_".');
      return andThen(this.lookup(identity, requested), (found) => {
        const project = unlessClosed(found);
        if (!project)
          throw new AppError('PROJECT_SCOPE_DENIED', 'That project does not exist or this credential cannot reach it.');
        return owned(project, mode);
      });
    }
    return andThen(this.fallback(identity), (fallback) =>
      andThen(fallback ? this.lookup(identity, fallback) : null, (found) => {
        const project = found === CLOSED && mode === 'optional' ? null : unlessClosed(found);
        if (!project && mode !== 'optional')
          throw new AppError('PROJECT_REQUIRED', 'Pass projectId, or star a default project in the profile.');
        return owned(project, mode);
      }),
    );
  }

  /** The project as this credential may see it, or null (a closed board too: see select for its own code). */
  async reachable(identity: Identity, projectId: string): Promise<SelectedProject | null> {
    const found = await this.lookup(identity, projectId);
    return found === CLOSED ? null : found;
  }

  /** Whether the credential would reach the project but its board is closed (BOARD_CLOSED, as `select` refuses it). */
  async closedTo(identity: Identity, projectId: string): Promise<boolean> {
    return (await this.lookup(identity, projectId)) === CLOSED;
  }

  /** The project as this credential may see it; CLOSED when it would, but the board is closed; null when it cannot reach it at all. */
  private lookup(identity: Identity, projectId: string): Maybe<Lookup> {
    if (identity.kind === 'token' && identity.scope !== 'account' && identity.boardId !== projectId) return null;
    // A socket's own copy of an identity finds the selection of the one it was copied from.
    const key = sharedIdentity(identity);
    const before = this.looked.get(key);
    // The membership's id as made before: a string made anew would be hashed anew for the cache's map.
    const memberId = before?.projectId === projectId ? before.memberId : `${projectId}:${identity.accountId}`;
    return andThen(both(this.store.projects.get(projectId), this.store.members.get(memberId)), ([project, member]) => {
      // `before` may be older than the map by now (a read that waited): it still says what these records gave.
      if (before && before.projectId === projectId && before.project === project && before.member === member)
        return before.found;
      const found = this.found(identity, project, member);
      this.looked.set(key, { projectId, memberId, project, member, found });
      return found;
    });
  }

  private found(identity: Identity, project: ProjectRecord | null, member: MemberRecord | null): Lookup {
    // A board an import is still making is no one's yet (src/admin/import.ts).
    const held = project && project.importing == null ? roleOn(project, identity.accountId, member) : null;
    if (!project || !held) return null;
    if (closed(project)) return CLOSED;
    const role =
      identity.kind === 'token' && identity.scope !== 'account' ? lower(identity.role ?? 'member', held) : held;
    return {
      id: project._id,
      name: project.name,
      role,
      plan: project.plan,
      owned: project.ownerId === identity.accountId,
    };
  }

  private fallback(identity: Identity): Maybe<string | null> {
    if (identity.kind === 'token' && identity.scope !== 'account') return identity.boardId;
    return andThen(this.store.accounts.get(identity.accountId), (account) => account?.defaultProjectId ?? null);
  }
}

const CLOSED = Symbol('closed');

/**
 * Billing treats a project the caller does not own as unreachable (DOMAIN.md "Billing"). Not a
 * closure made in select: tsx, which runs npm start, names each named closure as it is made.
 */
function owned(project: SelectedProject | null, mode: SelectionMode): SelectedProject | null {
  if (project && mode === 'owned' && !project.owned)
    throw new AppError('PROJECT_SCOPE_DENIED', 'Only the board’s owner handles its billing.');
  return project;
}

/** A found project, or BOARD_CLOSED for one the credential would reach but whose owner is deleted. */
/** What BOARD_CLOSED says, wherever a closed board is refused (REST's selection, a socket's subscribe). */
export const BOARD_CLOSED_MESSAGE =
  'The board’s owner account was deleted, so the board is closed; it is kept 30 days for a restore, then purged.';

function unlessClosed(found: SelectedProject | typeof CLOSED | null): SelectedProject | null {
  if (found === CLOSED) throw new AppError('BOARD_CLOSED', BOARD_CLOSED_MESSAGE);
  return found;
}

/**
 * Whether the board is closed: its owner's account is deleted (src/admin/deletion.ts marks its
 * boards). The mark names that owner, so a board that changed hands since is open to its new owner.
 */
export const closed = (project: Pick<ProjectRecord, 'ownerId' | 'deletedOwner'>): boolean =>
  project.deletedOwner != null && project.deletedOwner === project.ownerId;

/**
 * The role `accountId` holds on `project`, or null when none. The owner is the account named by
 * projects.ownerId, whatever its membership says; a membership that says owner for anyone else (a
 * transfer cut short, src/accounts/transfers.ts) counts as admin. So a board never has two owners,
 * and ownership moves in one write.
 */
export function roleOn(
  project: Pick<ProjectRecord, 'ownerId'>,
  accountId: string,
  member: Pick<MemberRecord, 'role'> | null,
): Role | null {
  if (project.ownerId === accountId) return 'owner';
  if (!member) return null;
  return member.role === 'owner' ? 'admin' : member.role;
}

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

export const atLeast = (role: Role, needed: Role): boolean => RANK[role] >= RANK[needed];

/** Refuses (403 ROLE_REQUIRED) a caller whose role on the board is below `needed`. */
export function requireRole(role: Role, needed: Role): void {
  if (!atLeast(role, needed))
    throw new AppError('ROLE_REQUIRED', `This needs the ${needed} role on the board; you have ${role}.`, {
      role,
      needed,
    });
}

/** A token never acts above the role its account holds on the board. */
const lower = (a: Role, b: Role): Role => (RANK[a] <= RANK[b] ? a : b);
