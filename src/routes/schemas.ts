// Response shapes shared by several route modules (documented in OpenAPI from these schemas).
import { z } from 'zod';
import { publicAccount } from '../accounts/service.js';
import type { Reply, SetCookie } from '../http/route.js';
import type { AccountRecord } from '../../store/ports/store.js';

export const PublicAccount = z.object({
  id: z.string(),
  email: z.string(),
  displayName: z.string().nullable(),
  emailVerified: z.boolean(),
  defaultProjectId: z.string().nullable(),
  createdAt: z.string(),
});

export const AuthSessionResponse = z.object({ account: PublicAccount });

export const ProjectSummary = z.object({
  projectId: z.string(),
  name: z.string(),
  itemCount: z.number().int(),
  verifyCount: z.number().int(),
  blockedCount: z.number().int(),
  agentCount: z.number().int(),
  lastActivityAt: z.string(),
  owned: z.boolean(),
  role: z.enum(['owner', 'admin', 'member', 'viewer']),
  starred: z.boolean(),
});

/** An AuthSessionResponse with its session cookie. */
export const authSessionReply = (status: number, session: { account: AccountRecord; cookie: SetCookie }): Reply => ({
  status,
  body: { account: publicAccount(session.account) },
  cookies: [session.cookie],
});
