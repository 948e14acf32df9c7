// What the onboarding rules share (DOMAIN.md "Agent onboarding"): acting for an account that has
// no session of its own, and the board as a claimer sees it before and after taking it over.
import type { SessionIdentity } from '../auth/identity.js';
import { AppError } from '../errors/app-error.js';
import type { Store } from '../../store/ports/store.js';
import { summarize, type ProjectSummary } from './projects.js';

/**
 * The account itself acting as a signed-in person would: ServiceTokens reads an issuer's kind
 * and account (a session is bounded by nothing else), so tokens minted for an anonymous account,
 * or on an enrollment code a person made, are checked exactly as that person's own request.
 */
export const actingAs = (accountId: string): SessionIdentity => ({
  kind: 'session',
  principal: `user:${accountId}`,
  accountId,
  sessionId: '',
});

/** What a person may see of a board before taking it over. */
export interface BoardGlance {
  projectId: string;
  name: string;
  itemCount: number;
  agentCount: number;
  lastActivityAt: string;
}

export async function glanceOf(store: Store, projectId: string): Promise<BoardGlance> {
  const project = await store.projects.get(projectId);
  if (!project) throw new AppError('INVALID_LINK_TOKEN', 'This board no longer exists.');
  const owner = {
    _id: `${projectId}:${project.ownerId}`,
    version: 1,
    projectId,
    accountId: project.ownerId,
    role: 'owner' as const,
    acceptedAt: project.createdAt,
  };
  const { itemCount, agentCount, lastActivityAt, name } = await summarize(store, project, owner, null);
  return { projectId, name, itemCount, agentCount, lastActivityAt };
}

/** The board's summary as `accountId` lists it (GET /api/projects). */
export async function summaryOf(store: Store, accountId: string, projectId: string): Promise<ProjectSummary> {
  const [project, member, account] = await Promise.all([
    store.projects.get(projectId),
    store.members.get(`${projectId}:${accountId}`),
    store.accounts.get(accountId),
  ]);
  if (!project || !member) throw new AppError('PROJECT_SCOPE_DENIED');
  return summarize(store, project, member, account?.defaultProjectId ?? null);
}
