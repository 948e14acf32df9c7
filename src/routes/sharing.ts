// Board sharing (DOMAIN.md "Sharing"): invitations, members and transfers. Rules live in
// src/accounts/invitations.ts, members.ts and transfers.ts; these routes only map HTTP to them.
import { z } from 'zod';
import { Invitations } from '../accounts/invitations.js';
import { Members } from '../accounts/members.js';
import { Transfers } from '../accounts/transfers.js';
import type { SharingPorts } from '../accounts/sharing.js';
import { SharingMail } from '../accounts/sharing-mail.js';
import { originOf } from '../audit-row.js';
import { committedAudit } from '../board/committed-audit.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';

const Role = z.enum(['owner', 'admin', 'member', 'viewer']);
const GrantedRole = z.enum(['admin', 'member', 'viewer']);
const NoBody = z.strictObject({}).optional();

const InviteBody = z.strictObject({
  email: z
    .string()
    .min(1)
    .max(254)
    .describe('The address to invite; compared canonically (trimmed, lower case) with the accepting account’s.'),
  role: GrantedRole.default('member').describe('admin (only the owner invites admins), member (default) or viewer.'),
});
const AcceptBody = z.strictObject({
  token: z.string().min(1).max(128).describe('The token from the mailed link (the part after #token=).'),
});
const RoleBody = z.strictObject({ role: GrantedRole.describe('The new role. Ownership moves only by transfer.') });
const TransferBody = z.strictObject({
  toUserId: z
    .string()
    .min(1)
    .max(64)
    .describe('An accepted member of the board, as listed by GET /api/boards/{projectId}/members.'),
});

export const Invitation = z.object({
  invitationId: z.string(),
  projectId: z.string(),
  email: z.string(),
  role: GrantedRole,
  status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  invitedBy: z.string().describe('The inviting account’s id.'),
  createdAt: z.string(),
  expiresAt: z.string().describe('When the current link stops working (a resend restarts the 7 days).'),
  acceptedBy: z.string().nullable(),
  acceptedAt: z.string().nullable(),
});
export const Member = z.object({
  userId: z.string(),
  email: z
    .string()
    .nullable()
    .describe(
      'The member’s address, shown to the board’s admins and owner (and to each member about themselves); null for everyone else.',
    ),
  displayName: z.string().nullable(),
  name: z
    .string()
    .describe(
      'How to call the member: their display name, else their address where it is shown, else `member <first 8 characters of userId>`.',
    ),
  role: Role,
  acceptedAt: z.string(),
});
export const Transfer = z.object({
  transferId: z.string(),
  projectId: z.string(),
  fromUserId: z.string(),
  toUserId: z.string(),
  status: z.enum(['pending', 'accepted', 'cancelled', 'expired']),
  createdAt: z.string(),
  expiresAt: z.string(),
});
export const MemberListing = z.object({
  projectId: z.string(),
  name: z.string(),
  role: Role.describe('Your own role on the board.'),
  members: z.array(Member),
  transfer: z
    .object({
      transferId: z.string(),
      fromUserId: z.string(),
      toUserId: z.string(),
      status: z
        .enum(['pending', 'accepted'])
        .describe(
          'pending: offered, waiting for the recipient; accepted: accepted, but a failure cut the move short: the recipient finishes it by accepting again.',
        ),
      expiresAt: z.string(),
    })
    .nullable()
    .describe('The open ownership transfer, if any: an offer not yet accepted, or an accepted one not yet finished.'),
});
export const InvitationPreview = z.object({
  invitationId: z.string(),
  projectId: z.string(),
  name: z.string().describe('The board’s name.'),
  role: GrantedRole,
  email: z.string().describe('The invited address (yours).'),
  invitedBy: z.string().nullable().describe('The inviting account’s email, null when it no longer exists.'),
  status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  expiresAt: z.string(),
});
const Accepted = z.object({ invitationId: z.string(), projectId: z.string(), name: z.string(), role: GrantedRole });

const BOARD = '/api/boards/{projectId}';
const ONE_INVITATION = `${BOARD}/invitations/{invitationId}`;
const ONE_MEMBER = `${BOARD}/members/{userId}`;

/** What the sharing routes use of the server's dependencies. */
export type SharingDeps = Pick<
  RouteDeps,
  'config' | 'store' | 'mailer' | 'selector' | 'logger' | 'revoke' | 'membership'
>;

export function sharingRoutes(deps: SharingDeps): Route[] {
  const ports: SharingPorts = {
    store: deps.store,
    selector: deps.selector,
    mailer: deps.mailer,
    publicUrl: deps.config.publicUrl,
    membership: deps.membership,
    revoke: deps.revoke,
    audit: committedAudit(deps.store, deps.logger),
  };
  const mail = new SharingMail(deps.store, deps.mailer);
  const invitations = new Invitations(ports, mail);
  const members = new Members(ports);
  const transfers = new Transfers(ports, mail);
  const group = 'sharing';
  /** Account structure: a session or an account-scoped token; workspace and resource tokens are refused. */
  const managed = { group, auth: 'bearer-or-session', accountScope: true, rateHeaders: true } as const;
  /** A person's own step (accepting): a cookie session only. */
  const personal = { group, auth: 'session', rate: 'write', rateHeaders: true } as const;

  return [
    defineRoute({
      ...managed,
      method: 'get',
      path: `${BOARD}/members`,
      summary:
        'Who is on the board, with their roles, and the open ownership transfer (any member; addresses for admins and the owner only).',
      bodyKind: 'none',
      rate: 'read',
      errors: ['INVALID_PROJECT_ID'],
      responses: {
        200: { description: 'Members, owner first, then by role and joining order.', schema: MemberListing },
      },
      async handler({ ctx }) {
        return { status: 200, body: await members.list(ctx.identity!, ctx.params.projectId!, ctx.now) };
      },
    }),
    defineRoute({
      ...managed,
      method: 'get',
      path: `${BOARD}/invitations`,
      summary: 'The board’s invitations with their status (admin or owner), newest first, at most 200.',
      description:
        'Status is pending, accepted, revoked or expired (a pending one past its expiry). Pending invitations are not memberships: they give no access and never appear in project listings.',
      bodyKind: 'none',
      rate: 'read',
      errors: ['INVALID_PROJECT_ID', 'ROLE_REQUIRED'],
      responses: { 200: { description: 'Invitations.', schema: z.object({ invitations: z.array(Invitation) }) } },
      async handler({ ctx }) {
        return {
          status: 200,
          body: { invitations: await invitations.list(ctx.identity!, ctx.params.projectId!, ctx.now) },
        };
      },
    }),
    defineRoute<z.infer<typeof InviteBody>, undefined>({
      ...managed,
      method: 'post',
      path: `${BOARD}/invitations`,
      refusedWhileImpersonating: true,
      summary: 'Invite an address to the board: a single-use accept link (7 days) is mailed to it.',
      description:
        'Admins invite members and viewers; only the owner invites admins (403 ROLE_REQUIRED). The link is `/invitations/{invitationId}#token=<token>` (32 random bytes; only its sha256 is stored). ' +
        'An earlier pending invitation of the same address is revoked (its link dies). An address that is already a member: 409 ALREADY_MEMBER. ' +
        'A board holds at most 100 pending invitations and 500 members (429 INVITATION_LIMIT). Invitations, resends and transfer offers share one mail budget per board, counted by the mails sent: ' +
        'at most 50 in any hour, whoever they go to, and one a minute per address, revoked invitations included (429 INVITATION_LIMIT with Retry-After). ' +
        'Concurrent invitations of one board are taken one at a time on every node (one held too long: 503 SHARING_BUSY), so they never pass these limits together and an address never holds two live links.',
      bodyKind: 'json',
      body: InviteBody,
      rate: 'write',
      errors: [
        'INVALID_PROJECT_ID',
        'ROLE_REQUIRED',
        'INVALID_EMAIL',
        'ALREADY_MEMBER',
        'INVITATION_LIMIT',
        'SHARING_BUSY',
      ],
      responses: { 201: { description: 'Invited and mailed.', schema: z.object({ invitation: Invitation }) } },
      async handler({ ctx, body }) {
        return {
          status: 201,
          body: {
            invitation: await invitations.invite(ctx.identity!, ctx.params.projectId!, body, ctx.now, originOf(ctx)),
          },
        };
      },
    }),
    defineRoute({
      group,
      auth: 'session',
      rate: 'read',
      rateHeaders: true,
      method: 'get',
      path: '/api/boards/invitations/{invitationId}',
      summary: 'Your invitation before you accept it: the board’s name, the role, who invited you, its status.',
      description:
        'For the invited address only (another account: 403 INVITATION_EMAIL_MISMATCH, so the page can say so before anything is tried), once confirmed (403 EMAIL_NOT_VERIFIED until the account opened its confirmation link). ' +
        'Needs no token and gives no access; accepting needs the link’s token.',
      bodyKind: 'none',
      errors: ['INVITATION_NOT_FOUND', 'INVITATION_EMAIL_MISMATCH', 'EMAIL_NOT_VERIFIED'],
      responses: { 200: { description: 'The invitation.', schema: InvitationPreview } },
      async handler({ ctx }) {
        return { status: 200, body: await invitations.preview(ctx.identity!, ctx.params.invitationId!, ctx.now) };
      },
    }),
    defineRoute<z.infer<typeof AcceptBody>, undefined>({
      ...personal,
      method: 'post',
      path: '/api/boards/invitations/{invitationId}/accept',
      refusedWhileImpersonating: true,
      summary:
        'Accept an invitation with its link’s token, signed in as the invited, confirmed address; the membership starts at once.',
      description:
        'Refusals in this order: no such invitation (404 INVITATION_NOT_FOUND); a token that is not the current link’s (a resend replaced it), a revoked or an already accepted invitation (400 INVALID_LINK_TOKEN); ' +
        'an expired link (400 EXPIRED_TOKEN); a session whose canonical email is not the invited one (403 INVITATION_EMAIL_MISMATCH); an account that has not confirmed its email (403 EMAIL_NOT_VERIFIED: a forwarded link is not enough to join as the invited address); ' +
        'a sender who is no longer an admin of the board, or no longer its owner for an admin invitation (400 INVALID_LINK_TOKEN: a removed or demoted member’s invitations are revoked with them); ' +
        'a board with 500 members already (429 INVITATION_LIMIT; the link stays usable); then the invitation is taken with a version check, which alone makes the link single-use: of two accepts of one link exactly one succeeds, the other is 400 INVALID_LINK_TOKEN; ' +
        'already a member (409 ALREADY_MEMBER) or a membership that cannot be written puts the link back.',
      bodyKind: 'json',
      body: AcceptBody,
      errors: [
        'INVITATION_NOT_FOUND',
        'INVALID_LINK_TOKEN',
        'EXPIRED_TOKEN',
        'INVITATION_EMAIL_MISMATCH',
        'EMAIL_NOT_VERIFIED',
        'ALREADY_MEMBER',
        'INVITATION_LIMIT',
      ],
      responses: { 200: { description: 'Accepted: the board, and your role on it.', schema: Accepted } },
      async handler({ ctx, body }) {
        return {
          status: 200,
          body: await invitations.accept(ctx.identity!, ctx.params.invitationId!, body.token, ctx.now, originOf(ctx)),
        };
      },
    }),
    defineRoute<z.infer<typeof NoBody>, undefined>({
      ...managed,
      method: 'post',
      path: `${ONE_INVITATION}/revoke`,
      refusedWhileImpersonating: true,
      summary: 'Revoke an invitation: its link stops working at once (idempotent).',
      description:
        'Admin invitations are managed by the owner only. An accepted invitation cannot be revoked (409 INVITATION_CLOSED): remove the member instead.',
      bodyKind: 'optional-json',
      body: NoBody,
      rate: 'write',
      errors: ['INVALID_PROJECT_ID', 'ROLE_REQUIRED', 'INVITATION_NOT_FOUND', 'INVITATION_CLOSED'],
      responses: { 200: { description: 'Revoked.', schema: z.object({ invitation: Invitation }) } },
      async handler({ ctx }) {
        return {
          status: 200,
          body: {
            invitation: await invitations.revoke(
              ctx.identity!,
              ctx.params.projectId!,
              ctx.params.invitationId!,
              ctx.now,
              originOf(ctx),
            ),
          },
        };
      },
    }),
    defineRoute<z.infer<typeof NoBody>, undefined>({
      ...managed,
      method: 'post',
      path: `${ONE_INVITATION}/resend`,
      refusedWhileImpersonating: true,
      summary: 'Mail a new link for a pending or expired invitation: the old link dies and the 7 days restart.',
      description:
        'Accepted or revoked invitations are closed (409 INVITATION_CLOSED). An invitation whose sender is no longer an admin of the board (the owner, for an admin invitation) is dead: 400 INVALID_LINK_TOKEN (send a new one). ' +
        'A resend is a mail of the board’s budget like an invitation: at most one a minute per address and 50 an hour per board (429 INVITATION_LIMIT with Retry-After).',
      bodyKind: 'optional-json',
      body: NoBody,
      rate: 'write',
      errors: [
        'INVALID_PROJECT_ID',
        'ROLE_REQUIRED',
        'INVITATION_NOT_FOUND',
        'INVITATION_CLOSED',
        'INVALID_LINK_TOKEN',
        'INVITATION_LIMIT',
        'SHARING_BUSY',
      ],
      responses: { 200: { description: 'Resent.', schema: z.object({ invitation: Invitation }) } },
      async handler({ ctx }) {
        return {
          status: 200,
          body: {
            invitation: await invitations.resend(
              ctx.identity!,
              ctx.params.projectId!,
              ctx.params.invitationId!,
              ctx.now,
            ),
          },
        };
      },
    }),
    defineRoute<z.infer<typeof RoleBody>, undefined>({
      ...managed,
      method: 'post',
      path: `${ONE_MEMBER}/role`,
      refusedWhileImpersonating: true,
      summary: 'Change a member’s role: the owner for changes to or from admin, admins for member and viewer.',
      description:
        'The owner’s role never changes (409 OWNER_IMMUTABLE; ownership moves by transfer). The change holds from the next request on every node. A lower role narrows the member’s tokens for this board to it (below admin, the invitations they sent and are still pending are revoked), ' +
        'and their sockets on the board are unsubscribed (an `unsubscribed` message): a new subscribe is checked under the new role.',
      bodyKind: 'json',
      body: RoleBody,
      rate: 'write',
      errors: ['INVALID_PROJECT_ID', 'ROLE_REQUIRED', 'MEMBER_NOT_FOUND', 'OWNER_IMMUTABLE'],
      responses: { 200: { description: 'The member with the new role.', schema: z.object({ member: Member }) } },
      async handler({ ctx, body }) {
        return {
          status: 200,
          body: {
            member: await members.setRole(
              ctx.identity!,
              ctx.params.projectId!,
              ctx.params.userId!,
              body.role,
              ctx.now,
              originOf(ctx),
            ),
          },
        };
      },
    }),
    defineRoute({
      ...managed,
      method: 'delete',
      path: ONE_MEMBER,
      refusedWhileImpersonating: true,
      summary: 'Remove a member: admins remove lower roles, anyone may remove themselves; never the owner.',
      description:
        'Takes effect on the next request on every node: the member’s tokens for this board are revoked (their sockets close), their other sockets are unsubscribed from the board, an open transfer to them is cancelled, and the invitations they sent and are still pending are revoked.',
      bodyKind: 'none',
      rate: 'write',
      errors: ['INVALID_PROJECT_ID', 'ROLE_REQUIRED', 'MEMBER_NOT_FOUND', 'OWNER_IMMUTABLE'],
      responses: { 204: { description: 'Removed.' } },
      async handler({ ctx }) {
        await members.remove(ctx.identity!, ctx.params.projectId!, ctx.params.userId!, ctx.now, originOf(ctx));
        return { status: 204 };
      },
    }),
    defineRoute<z.infer<typeof TransferBody>, undefined>({
      ...personal,
      method: 'post',
      path: `${BOARD}/transfers`,
      refusedWhileImpersonating: true,
      summary: 'Offer the board to an accepted member for 7 days (owner); the recipient is mailed.',
      description:
        'A new offer cancels the open one. The recipient accepts with POST /api/boards/transfers/{transferId}/accept (the id is also on GET /api/boards/{projectId}/members). ' +
        'The offer’s mail draws on the board’s sharing-mail budget, shared with invitations: 50 an hour, one a minute per address (429 INVITATION_LIMIT with Retry-After).',
      bodyKind: 'json',
      body: TransferBody,
      errors: [
        'INVALID_PROJECT_ID',
        'PROJECT_SCOPE_DENIED',
        'ROLE_REQUIRED',
        'MEMBER_NOT_FOUND',
        'INVITATION_LIMIT',
        'SHARING_BUSY',
      ],
      responses: { 201: { description: 'Offered.', schema: z.object({ transfer: Transfer }) } },
      async handler({ ctx, body }) {
        return {
          status: 201,
          body: {
            transfer: await transfers.open(ctx.identity!, ctx.params.projectId!, body.toUserId, ctx.now, originOf(ctx)),
          },
        };
      },
    }),
    defineRoute<z.infer<typeof NoBody>, undefined>({
      ...personal,
      method: 'post',
      path: '/api/boards/transfers/{transferId}/accept',
      refusedWhileImpersonating: true,
      summary: 'Take over a board offered to you: you become owner, the previous owner becomes admin.',
      description:
        'Only the recipient, while the offer is open, the sender still owns the board and the recipient is still a member (else 404 TRANSFER_NOT_FOUND); within the recipient’s board limit (403 FREE_PROJECT_LIMIT, counting the incoming board’s plan). ' +
        'Accepted once, with a version check. The board’s billing (customer, subscription, plan) stays with the board; the new owner manages it. ' +
        'Ownership is projects.ownerId alone: the recipient’s membership becomes owner first (a removal after that is 409 OWNER_IMMUTABLE), then the board moves, then the previous owner steps down to admin. ' +
        'An accept cut short by a failure part-way is finished by the recipient accepting again (200); once finished, 404 TRANSFER_NOT_FOUND.',
      bodyKind: 'optional-json',
      body: NoBody,
      errors: ['TRANSFER_NOT_FOUND', 'FREE_PROJECT_LIMIT', 'ACCOUNT_BUSY'],
      responses: { 200: { description: 'Accepted.', schema: z.object({ transfer: Transfer, name: z.string() }) } },
      async handler({ ctx }) {
        const { name, ...transfer } = await transfers.accept(
          ctx.identity!,
          ctx.params.transferId!,
          ctx.now,
          originOf(ctx),
        );
        return { status: 200, body: { transfer, name } };
      },
    }),
  ];
}
