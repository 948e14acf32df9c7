// What every operator route shares: the gate (`auth: 'operator'`: 404 to all but an operator's
// session, src/admin/gate.ts), the operators' own budget, the `admin` group (the OpenAPI tag), and
// the `reason` destructive actions require.
import { z } from 'zod';

export const adminBase = { group: 'admin', auth: 'operator', rate: 'operator' } as const;

/** Why an operator takes a destructive action; it goes into the audit row. */
export const Reason = z.string().trim().min(3, 'say why (3 characters or more)').max(500);

/** Listing pages: newest first, `cursor` from the previous page's `nextCursor` (INVALID_CURSOR otherwise). */
export const PageQuery = z.strictObject({
  cursor: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** An audit row as every operator view shows it (src/admin/audit-log.ts auditView). */
export const AuditRow = z.object({
  id: z.string(),
  at: z.string(),
  actor: z
    .string()
    .describe('Who acted: `user:<id>` (an account, or an operator acting on its own), `agent:<id>`, `provider`.'),
  impersonatedBy: z
    .string()
    .nullable()
    .describe(
      'The operator’s account id when the actor is an account an operator acted as (an impersonation session); null otherwise.',
    ),
  action: z.string(),
  target: z.string().nullable(),
  projectId: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
});

/** The accounts a page names (src/admin/named-accounts.ts), by id: operators know them by their address. */
export const NamedAccounts = z
  .record(
    z.string(),
    z.object({
      email: z.string().nullable().describe('The account’s address; null once the account is purged.'),
      deleted: z.boolean().describe('Deleted by its owner or an operator (restorable within 30 days), or purged.'),
    }),
  )
  .describe('Every account the page names (`user:<id>`, `account:<id>`, `impersonatedBy`), keyed by account id.');
