// Response shapes shared by several route modules (documented in OpenAPI from these schemas).
import { z } from 'zod';
import { PROJECT_NAME_MAX, PROJECT_NAME_RULE } from '../accounts/projects.js';
import { publicAccount } from '../accounts/service.js';
import type { Reply, SetCookie } from '../http/route.js';
import { AppError } from '../errors/app-error.js';
import type { ErrorCode } from '../errors/registry.js';
import { refusedInputs } from '../openapi/document.js';
import type { AccountRecord } from '../../store/ports/store.js';

/** Accepted only to refuse precisely (400 COMMIT_ID_FORBIDDEN); the document shows it as never allowed. */
export const ForbiddenHead = z
  .string()
  .register(refusedInputs, {
    description:
      'Refused with 400 COMMIT_ID_FORBIDDEN: this operation takes no commit id (submit one with POST /api/submit).',
  })
  .optional();

/**
 * A string of at least one character whose empty value is refused with the contract's own code
 * rather than INVALID_INPUT; documented with `minLength: 1`, so the document and validation agree.
 */
export const nonEmptyString = (code: ErrorCode, message: string) =>
  z
    .string()
    .check((ctx) => {
      if (ctx.value === '') throw new AppError(code, message);
    })
    .meta({ minLength: 1 });

/**
 * A board's name as a body names it: the rule (src/accounts/projects.ts) for the schema and its
 * refusal. Code points, as the JSON Schema counts them and checkProjectName does (past surrounding
 * whitespace, which is trimmed).
 */
export const ProjectName = nonEmptyString('INVALID_PROJECT_NAME', PROJECT_NAME_RULE).meta({
  maxLength: PROJECT_NAME_MAX,
  description: `${PROJECT_NAME_RULE} Surrounding whitespace is trimmed; otherwise 400 INVALID_PROJECT_NAME.`,
});

/** Printable: no control, zero-width or bidi-override characters, so a person reads what was sent. */
const PRINTABLE = /^[^\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]+$/; // eslint-disable-line no-control-regex

/** A new agent's name (its token's), shown to people on the board: 1 to 80 printable characters. */
export const AgentName = z.string().min(1).max(80).regex(PRINTABLE, 'must be 1 to 80 printable characters');

export const PublicAccount = z.object({
  id: z.string(),
  email: z.string(),
  displayName: z.string().nullable(),
  emailVerified: z.boolean(),
  defaultProjectId: z.string().nullable(),
  createdAt: z.string(),
});

export const AuthSessionResponse = z.object({
  account: PublicAccount,
  csrfToken: z.string().describe('Send it back in X-CSRF-Token on every write made with this session.'),
});

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
export const authSessionReply = (
  status: number,
  session: { account: AccountRecord; cookie: SetCookie; csrfToken: string },
): Reply => ({
  status,
  body: { account: publicAccount(session.account), csrfToken: session.csrfToken },
  cookies: [session.cookie],
});
