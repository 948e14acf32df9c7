// Provisioning for automation (DOMAIN.md "Agent onboarding"): one call makes a board and a
// workspace token for each of its agents.
import { AppError } from '../errors/app-error.js';
import type { Identity } from '../auth/identity.js';
import type { ProjectSelector } from '../auth/project-selection.js';
import type { Store } from '../../store/ports/store.js';
import type { RequestOrigin } from '../audit-row.js';
import type { CommittedAudit } from '../board/committed-audit.js';
import { checkProjectName, createProject } from './projects.js';
import { MAX_TOKENS_PER_ACCOUNT, ServiceTokens, tokensHeld, type PublicToken } from './service-tokens.js';

export const MAX_AGENTS_PER_PROVISION = 50;

export interface Provisioned {
  projectId: string;
  agents: { token: PublicToken; secret: string }[];
}

/**
 * Creates the board within the account's board limit, then issues one member token per agent
 * name, as the caller issuing them one by one would (a token caller's tokens expire with it).
 * The token room is checked first, so the board is not left without its agents.
 */
export async function provisionBoard(
  ports: { store: Store; selector: ProjectSelector; audit: CommittedAudit },
  identity: Identity,
  input: { projectName: string; agents: string[] },
  now: number,
  origin: RequestOrigin,
): Promise<Provisioned> {
  const { store, selector, audit } = ports;
  checkProjectName(input.projectName);
  const held = await tokensHeld(store, identity.accountId, input.agents.length);
  if (held + input.agents.length > MAX_TOKENS_PER_ACCOUNT) {
    throw new AppError(
      'INVALID_INPUT',
      `An account holds at most ${MAX_TOKENS_PER_ACCOUNT} tokens; this would make ${held + input.agents.length}. Revoke unused ones first.`,
      { field: 'body.agents' },
    );
  }
  const project = await createProject(store, { by: identity, origin, audit }, input.projectName, now);
  const tokens = new ServiceTokens(store, selector, audit);
  const agents: Provisioned['agents'] = [];
  for (const name of input.agents)
    agents.push(await tokens.issue(identity, { name, scope: 'workspace', projectId: project._id }, now, origin));
  return { projectId: project._id, agents };
}
