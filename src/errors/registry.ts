// Every error code the service can answer with: its status, meaning and fix. Which operations
// raise a code is read from the route table (each route's `errors`, and what its pipeline stages
// add: src/http/route-errors.ts), as the OpenAPI document lists them; GET /api/errors joins those to
// the few places named here that are not routes (src/openapi/raised-by.ts).

interface ErrorSpec {
  readonly status: number;
  readonly meaning: string;
  readonly fix: string;
  /**
   * Where the code is raised besides the routes that list it: the socket, transport refusals
   * (unknown paths, bodies), and rules over many operations. Never a route of the table
   * (test/errors/registry.test.ts holds it).
   */
  readonly raisedBy?: readonly string[];
}

const AUTHENTICATED = 'every authenticated operation';
/** The operations are those the route table marks `refusedWhileImpersonating` (src/http/route.ts); GET /api/errors and the OpenAPI document list them from there. */
const REFUSED_WHILE_IMPERSONATING =
  'every operation refused while an operator acts as the account (each names this code among its responses)';
const JSON_WRITES = 'every operation that takes a JSON body';
/** The WebSocket upgrade: not a route of the table (the OpenAPI document describes it apart). */
const SOCKET = 'GET /api/ws';
export const ERRORS = {
  INVALID_EMAIL: {
    status: 400,
    meaning: 'The email address is not a valid address.',
    fix: 'Send a syntactically valid email address.',
  },
  INVALID_INPUT: {
    status: 400,
    meaning: 'The body or query failed validation: a property is unknown, missing, or of the wrong type or size.',
    fix: 'Read `message` for the field at fault, correct it, and resend.',
    raisedBy: [JSON_WRITES],
  },
  INVALID_JSON: {
    status: 400,
    meaning: 'The body is not well-formed JSON.',
    fix: 'Send a well-formed JSON document.',
    raisedBy: [JSON_WRITES],
  },
  INVALID_PASSWORD: {
    status: 400,
    meaning: 'The password is not 12 to 128 characters long.',
    fix: 'Choose a password of 12 to 128 characters.',
  },
  REFERRAL_CODE_INVALID: {
    status: 400,
    meaning: 'The referral code does not exist. No account was created.',
    fix: 'Check the code, or sign up without one.',
  },
  INVALID_PROJECT_ID: {
    status: 400,
    meaning: 'The board selection is not a usable board id (projectId).',
    fix: 'Pass the id of one of your boards as listed by GET /api/projects.',
  },
  INVALID_DISPLAY_NAME: {
    status: 400,
    meaning: 'The display name is longer than 80 characters or not a string.',
    fix: 'Send a string of at most 80 characters, or null to clear it.',
  },
  INVALID_REWIND_POINT: {
    status: 400,
    meaning: 'The restore point id is not 1 to 181 characters.',
    fix: 'Use a restorePointId from the rewind preview.',
  },
  INVALID_REWIND_SLICE: {
    status: 400,
    meaning: 'The restore point does not hold a usable board slice.',
    fix: 'Choose another restore point from the preview.',
  },
  REWIND_CONFIRMATION_REQUIRED: {
    status: 400,
    meaning: 'Rewind needs `confirm` set to exactly REWIND_SERVICE_BOARD.',
    fix: 'Send confirm: "REWIND_SERVICE_BOARD".',
  },
  REWIND_VERSION_REQUIRED: {
    status: 400,
    meaning: 'Rewind needs the current board fingerprint as optimistic-concurrency proof.',
    fix: 'Send expectedFingerprint from the preview (sha256:<64 hex>).',
  },
  INVALID_BILLING_INTERVAL: {
    status: 400,
    meaning: 'The billing interval is not `month` or `year`.',
    fix: 'Send interval "month" or "year".',
  },
  INVALID_CURSOR: {
    status: 400,
    meaning: 'The cursor is not a usable string.',
    fix: 'Pass pagination.nextCursor exactly as received, or omit it.',
  },
  INVALID_PROJECT_NAME: {
    status: 400,
    meaning: 'The board name is empty, too long, or contains control characters.',
    fix: 'Send a name of 1 to 80 printable characters.',
  },
  PROVIDER_EVENT_ACCOUNT_MISMATCH: {
    status: 400,
    meaning: 'The provider event names a customer that belongs to another account or board.',
    fix: 'Nothing to do as a client; the provider configuration needs checking.',
  },
  PROVIDER_EVENT_INVALID: {
    status: 400,
    meaning: 'The provider event is not one this service accepts, or is malformed.',
    fix: 'Send only the subscription events this service documents.',
  },
  PROVIDER_SIGNATURE_INVALID: {
    status: 400,
    meaning: 'The provider signature header is missing, empty, or does not verify over the raw body.',
    fix: 'Deliver the event exactly as signed, with its signature header.',
  },
  ACCOUNT_DELETE_CONFIRM_MISMATCH: {
    status: 400,
    meaning: 'Account deletion requires the exact account email as confirmation and it did not match.',
    fix: 'Re-read the signed-in email and resubmit the exact string.',
  },
  COMMIT_ID_FORBIDDEN: {
    status: 400,
    meaning: 'A commit id was sent on an operation or in a state that does not take one.',
    fix: 'Send commit ids only on submit, supersede and verify.',
  },
  CONFLICTING_DEPENDENCIES: {
    status: 400,
    meaning: 'The dependencies form a cycle, a self-dependency, or a dependency on an own ancestor or descendant.',
    fix: 'Remove the dependency that closes the cycle.',
  },
  CROSS_PROJECT_FOLD: {
    status: 400,
    meaning: 'A dependency names an item of another board.',
    fix: 'Depend only on items of the same board.',
  },
  CROSS_PROJECT_PARENT: {
    status: 400,
    meaning: 'The parent is an item of another board.',
    fix: 'Choose a parent on the same board.',
  },
  DOCTRINE_LINK_NOT_FOUND: {
    status: 400,
    meaning: 'A doctrine slug on the item does not exist on this board.',
    fix: 'Link only slugs listed by GET /api/doctrine.',
  },
  EVIDENCE_EXISTS: {
    status: 400,
    meaning: 'This verifier already recorded evidence for this head.',
    fix: 'Nothing to resend; a new head needs a new verification.',
  },
  EXPIRED_TOKEN: {
    status: 400,
    meaning: 'The service token, single-use link token or device code has expired.',
    fix: 'Reissue the token, request a new link, or start a new device flow.',
    raisedBy: [AUTHENTICATED],
  },
  INVALID_LINK_TOKEN: {
    status: 400,
    meaning:
      'The emailed link (or single-use code) is unknown, already used, revoked, replaced by a newer one, or no longer matches the account.',
    fix: 'Ask for a new link or code.',
  },
  FINDING_REQUIRED: {
    status: 400,
    meaning: 'A failing verdict needs a finding digest.',
    fix: 'Send finding as sha256:<64 hex> with verdict "fail".',
  },
  AUTHORIZATION_PENDING: {
    status: 400,
    meaning: 'The device code is not approved yet (RFC 8628 authorization_pending).',
    fix: 'Poll again after `interval` seconds.',
  },
  SLOW_DOWN: {
    status: 400,
    meaning: 'The device code was polled faster than its interval (RFC 8628 slow_down).',
    fix: 'Wait `interval` seconds (it grew by 5) between polls.',
  },
  ACCESS_DENIED: {
    status: 400,
    meaning:
      'The person asked to approve the device denied it, or can no longer issue tokens on the board (RFC 8628 access_denied).',
    fix: 'Start a new device flow if this was a mistake.',
  },
  INVALID_DEVICE_CODE: {
    status: 400,
    meaning: 'The device code is unknown, or its token was already delivered (RFC 8628 invalid_grant).',
    fix: 'Start a new device flow with POST /api/auth/device/start.',
  },
  AUTH_REQUIRED: {
    status: 401,
    meaning: 'The request reached an authenticated surface with no usable workspace credential.',
    fix: 'Send the Bearer token, or sign in for browser calls, and retry.',
  },
  INVALID_SERVICE_TOKEN: {
    status: 401,
    meaning: 'The Bearer token is unknown, malformed or revoked.',
    fix: 'Use a current token; issue a new one if it was revoked.',
  },
  UNAUTHENTICATED: {
    status: 401,
    meaning: 'No session cookie, or the session has expired or been revoked.',
    fix: 'Sign in again.',
  },
  INVALID_CREDENTIALS: {
    status: 401,
    meaning: 'The email and password do not match an account.',
    fix: 'Check both and retry, or reset the password.',
  },
  INVALID_CURRENT_PASSWORD: {
    status: 401,
    meaning: 'The current password given for re-authentication is wrong.',
    fix: 'Send the account’s current password.',
  },
  CSRF_REJECTED: {
    status: 403,
    meaning: 'A cookie-session write came from a foreign origin, or did not carry the session’s CSRF token.',
    fix: 'Send writes from the service’s own origin with the session’s csrfToken (from signup, login or GET /api/auth/me) in X-CSRF-Token, or use a Bearer token.',
    raisedBy: ['every cookie-session write'],
  },
  PROJECT_SCOPE_DENIED: {
    status: 403,
    meaning: 'The credential cannot reach that board, or its scope cannot act on account structure.',
    fix: 'Select a board you own or accepted, or use an account-scoped credential.',
  },
  BOARD_CLOSED: {
    status: 403,
    meaning:
      'The board’s owner account was deleted (by its owner or an operator), so the board is closed to its members and agents. Its data is kept 30 days from the deletion for a restore, then purged with the account.',
    fix: 'Ask the board’s owner to have their account restored (an operator can, within those 30 days); until then, work on another board.',
    raisedBy: ['every operation that selects a board (projectId, or the credential’s own or default board)'],
  },
  ACCOUNT_DELETED: {
    status: 403,
    meaning:
      'The account was deleted (by its owner or an operator): sign-in is refused. Its data is kept 30 days from the deletion, then purged.',
    fix: 'Ask an operator to restore the account within those 30 days; after the purge, sign up again.',
  },
  FREE_PROJECT_LIMIT: {
    status: 403,
    meaning: 'The plan’s board limit is reached.',
    fix: 'Delete a board or upgrade to Pro.',
  },
  VERIFY_NOT_INDEPENDENT: {
    status: 403,
    meaning: 'The verifier is the submitter or held a work lease on the item since it last became ready.',
    fix: 'Let a different agent verify.',
  },
  NOT_SUBMITTER: {
    status: 403,
    meaning: 'Only the agent that submitted the item may supersede its submission.',
    fix: 'Let the submitter supersede, or claim the item again once it is ready.',
  },
  IMPERSONATION_FORBIDDEN: {
    status: 403,
    meaning:
      'An operator is acting as this account (an impersonation session), and this action outlives the session or changes who can act or pay, so it is the account owner’s alone: its password, email or deletion; issuing, reissuing, changing or revoking tokens; enrollment codes, device approvals and an anonymous board’s takeover links; invitations, role changes, member removals and transfers; deleting a board; billing; applying a rewind.',
    fix: 'The account’s owner does it, signed in as themselves; the operator ends the impersonation (POST /api/admin/impersonation/end).',
    raisedBy: [REFUSED_WHILE_IMPERSONATING],
  },
  TOKEN_SCOPE_EXCEEDED: {
    status: 403,
    meaning: 'A token may not make or change a token that outlives or exceeds it, nor manage tokens it did not issue.',
    fix: 'Give the new token an expiry no later than the issuing token’s, and manage other tokens with a session.',
  },
  INVITATION_EMAIL_MISMATCH: {
    status: 403,
    meaning: 'The invitation was sent to another email address than the signed-in account’s.',
    fix: 'Sign in with the invited address, or ask for an invitation to yours.',
  },
  EMAIL_NOT_VERIFIED: {
    status: 403,
    meaning:
      'The signed-in account has not confirmed its email address, and this needs it confirmed: joining a board as the invited address takes proof that you read its mail.',
    fix: 'Open the confirmation link mailed to your address at signup (or at your last email change), then retry.',
  },
  ROLE_REQUIRED: {
    status: 403,
    meaning: 'Your role on this board does not allow the operation.',
    fix: 'Ask the board owner for a higher role.',
    raisedBy: ['every board operation above viewer'],
  },
  DOCTRINE_NOT_FOUND: {
    status: 404,
    meaning: 'No doctrine entry on this board has that slug.',
    fix: 'List the entries with GET /api/doctrine, or propose one with POST /api/doctrine.',
  },
  SPEC_CLAUSE_NOT_FOUND: {
    status: 404,
    meaning: 'No spec clause on this board has that id.',
    fix: 'List the clauses with GET /api/spec; clause ids look like S-3.',
  },
  ITEM_NOT_FOUND: {
    status: 404,
    meaning: 'No item on this board has that work id.',
    fix: 'Read the board with GET /api/status or GET /api/activity.',
  },
  FEEDBACK_NOT_FOUND: {
    status: 404,
    meaning: 'No feedback entry has that id.',
    fix: 'List the entries with GET /api/admin/feedback and use an id from there.',
  },
  TOKEN_NOT_FOUND: {
    status: 404,
    meaning: 'No service token of this account has that id.',
    fix: 'List tokens with GET /api/accounts/tokens.',
  },
  INVITATION_NOT_FOUND: {
    status: 404,
    meaning: 'No invitation of this board has that id.',
    fix: 'List the board’s invitations with GET /api/boards/{projectId}/invitations.',
  },
  MEMBER_NOT_FOUND: {
    status: 404,
    meaning: 'That account is not an accepted member of the board.',
    fix: 'List the members with GET /api/boards/{projectId}/members.',
  },
  TRANSFER_NOT_FOUND: {
    status: 404,
    meaning: 'No open transfer with that id is addressed to you.',
    fix: 'Ask the owner to open the transfer again.',
  },
  ENROLLMENT_CODE_NOT_FOUND: {
    status: 404,
    meaning: 'No live enrollment code of this board has that id: unknown, spent, expired or already revoked.',
    fix: 'List the board’s live codes with GET /api/boards/{projectId}/agents/enroll and use an id from there.',
  },
  DEVICE_CODE_NOT_FOUND: {
    status: 404,
    meaning: 'No pending device request has that user code.',
    fix: 'Check the code the agent shows (XXXX-XXXX); it expires after 10 minutes.',
  },
  NOT_FOUND: {
    status: 404,
    meaning: 'No such route or resource.',
    fix: 'Check the method and path against /docs/openapi.json.',
    raisedBy: ['any unknown path'],
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    meaning: 'The path exists but not with this method.',
    fix: 'Use a method named in the Allow header.',
    raisedBy: ['any known path with another method'],
  },
  REWIND_POINT_NOT_FOUND: {
    status: 404,
    meaning: 'No retained restore point has that id on this board.',
    fix: 'Pick a restorePointId from the preview listing.',
  },
  ACCOUNT_NOT_RESTORABLE: {
    status: 409,
    meaning:
      'The account is not deleted, or its 30 days after deletion are over and its purge is due: there is nothing to restore.',
    fix: 'Read the account with GET /api/admin/users/{userId}: an active account needs no restore, and a due purge cannot be undone.',
  },
  EMAIL_TAKEN: {
    status: 409,
    meaning: 'Another account already uses that email.',
    fix: 'Sign in, or use a different email.',
  },
  PROJECT_REQUIRED: {
    status: 409,
    meaning: 'No board was selected and the account has no starred default.',
    fix: 'Pass projectId, or star a default board in the profile.',
  },
  BILLING_PRO_REQUIRED: {
    status: 409,
    meaning: 'The operation needs the Pro plan on the selected board.',
    fix: 'Upgrade the board to Pro.',
  },
  BILLING_CUSTOMER_CONFLICT: {
    status: 409,
    meaning: 'The board is already attached to a different provider customer.',
    fix: 'Contact the operator to reconcile the billing record.',
  },
  BILLING_CUSTOMER_REQUIRED: {
    status: 409,
    meaning: 'The board never started a subscription, so it has no provider customer.',
    fix: 'Start a checkout first.',
  },
  BILLING_INTERVAL_UNSUPPORTED: {
    status: 409,
    meaning: 'The subscription’s interval cannot be moved to yearly.',
    fix: 'Manage the subscription in the billing portal.',
  },
  BILLING_SUBSCRIPTION_CONFLICT: {
    status: 409,
    meaning: 'The subscription changed at the provider while we switched it.',
    fix: 'Reload billing state and retry.',
  },
  BILLING_SUBSCRIPTION_REQUIRED: {
    status: 409,
    meaning: 'The board has no active subscription.',
    fix: 'Start a checkout first.',
  },
  BILLING_PAID_INVOICE_REQUIRED: {
    status: 409,
    meaning: 'The board’s subscription has no paid invoice with a payment to refund.',
    fix: 'Nothing to refund through the provider; settle it in the provider’s dashboard if money was taken otherwise.',
  },
  REWIND_VERSION_MISMATCH: {
    status: 409,
    meaning: 'The board changed since the fingerprint was read.',
    fix: 'Preview again and send the new fingerprint.',
  },
  BOARD_PAUSED: {
    status: 409,
    meaning:
      'The board is paused by its owner or an admin: claims and changes to the work graph or an item’s state wait. Renew, release, heartbeats, shouts, comments and reads go on, and leases keep their deadlines. Nothing was written.',
    fix: 'Keep renewing the leases you hold and retry once the board is resumed (a board.resumed event, or GET /api/status showing paused false); `details` names who paused it and when.',
  },
  DOCTRINE_EXISTS: {
    status: 409,
    meaning:
      'A doctrine entry with that slug is already on this board (of any status: entries are never deleted). Nothing was written.',
    fix: 'Agree with the existing entry (POST /api/doctrine/{slug}/agree), or propose under another slug.',
  },
  DOCTRINE_BLIND_TEST_UNSET: {
    status: 409,
    meaning: 'The doctrine entry holds no expected answer digest, so a blind test has nothing to be checked against.',
    fix: 'Ask an admin to set expectedDigest (when proposing, or when ratifying a proposed or rejected entry).',
  },
  HEAD_MISMATCH: {
    status: 409,
    meaning: 'The verdict names a head other than the current submission’s head.',
    fix: 'Verify the head commit the item currently carries.',
  },
  INVALID_TRANSITION: {
    status: 409,
    meaning: 'The item’s (or the doctrine entry’s) lifecycle does not accept that event in its current state.',
    fix: 'Read `details.state` and `details.allowed`, and send one of the allowed events.',
  },
  LEASE_NOT_HELD: {
    status: 409,
    meaning: 'The lease id is stale or belongs to someone else.',
    fix: 'Stop work on the item; claim it again if it is ready.',
  },
  LEASE_EXPIRED: {
    status: 409,
    meaning: 'The lease has expired.',
    fix: 'Stop work on the item; claim it again if it is ready.',
  },
  NOTHING_READY: {
    status: 409,
    meaning: 'No item is ready for this principal to claim.',
    fix: 'Wait for a lease.expired or item event, then claim again.',
  },
  ITEM_NOT_READY: {
    status: 409,
    meaning: 'The named item is not claimable in its current state.',
    fix: 'Read `details.state`; claim a ready item instead.',
  },
  VERSION_MISMATCH: {
    status: 409,
    meaning: 'The record changed since the version you sent.',
    fix: 'Read it again and resend with the current version.',
  },
  ALREADY_MEMBER: {
    status: 409,
    meaning: 'The invited address already belongs to a member of the board.',
    fix: 'Change the member’s role instead.',
  },
  INVITATION_CLOSED: {
    status: 409,
    meaning: 'The invitation was already accepted (or revoked), so it cannot be resent or revoked.',
    fix: 'Send a new invitation, or change the member’s role.',
  },
  OWNER_IMMUTABLE: {
    status: 409,
    meaning: 'The board’s owner cannot be demoted or removed.',
    fix: 'Transfer the board first (POST /api/boards/{projectId}/transfers).',
  },
  BOARD_NOT_ANONYMOUS: {
    status: 409,
    meaning:
      'The board belongs to a person’s account, or its anonymous account was claimed or ran out its 7 days: there is nothing to hand over with a claim link.',
    fix: 'Share the board with an invitation, or hand it over with POST /api/boards/{projectId}/transfers.',
  },
  FEEDBACK_CLOSED: {
    status: 409,
    meaning:
      'The feedback entry was triaged already (resolved, dismissed or promoted), or is being promoted, so it cannot be resolved, dismissed or promoted now.',
    fix: 'Read it again (GET /api/admin/feedback): `details.status` says what became of it, and a promoted entry names its item.',
  },
  ALLOWLIST_LIMIT: {
    status: 409,
    meaning: 'The allowlist holds as many entries as it may (10,000).',
    fix: 'Remove entries no longer needed, or list a CIDR range or an email domain instead of many addresses.',
  },
  BODY_TOO_LARGE: {
    status: 413,
    meaning: 'The request body is larger than the configured limit.',
    fix: 'Send a smaller body; split batches.',
    raisedBy: [JSON_WRITES],
  },
  JSON_REQUIRED: {
    status: 415,
    meaning: 'A write must carry Content-Type: application/json.',
    fix: 'Set Content-Type: application/json and send a JSON body.',
    raisedBy: [JSON_WRITES],
  },
  REWIND_SLICE_INTEGRITY: {
    status: 422,
    meaning: 'The stored restore point does not match its fingerprint.',
    fix: 'Choose another restore point; report this one.',
  },
  REWIND_SLICE_SCOPE: {
    status: 422,
    meaning:
      'The slice does not fit the current board: a restored item would depend on or sit under an item that would not exist, a dependency would form a cycle, or an item outside the slice depends on one the slice removes.',
    fix: 'Restore a larger slice (an ancestor of this one) or the whole board.',
  },
  RATE_LIMITED: {
    status: 429,
    meaning: 'The rate budget for this window is spent.',
    fix: 'Wait until the X-RateLimit-*-Reset time (Retry-After seconds) and retry. With `details.scope: "sockets"` (GET /api/ws) the credential holds as many open sockets as it may: close one of its sockets first.',
    raisedBy: [SOCKET],
  },
  SUBSCRIPTION_LIMIT: {
    status: 429,
    meaning: 'This socket already watches as many boards as one socket may.',
    fix: 'Unsubscribe from a board first, or open another socket.',
    raisedBy: ['GET /api/ws (subscribe message)'],
  },
  INVITATION_LIMIT: {
    status: 429,
    meaning:
      'The board holds as many pending invitations or members as it may, sent as many sharing mails (invitations, resends, transfer offers) this hour as it may, or mailed this address less than a minute ago.',
    fix: 'Revoke unused invitations, or wait the Retry-After seconds before mailing the same address again.',
  },
  FEEDBACK_LIMIT: {
    status: 429,
    meaning:
      'Too many open feedback entries: this principal has 20 open on the board, or the board has 500 (`details.scope` says which). Nothing was written.',
    fix: 'Wait for operators to triage open feedback (resolve, dismiss or promote), then post again.',
  },
  INTERNAL: {
    status: 500,
    meaning: 'The service failed unexpectedly. Nothing about the failure is disclosed.',
    fix: 'Retry; report the requestId if it persists.',
    raisedBy: ['every operation'],
  },
  PROVIDER_REQUEST_FAILED: {
    status: 502,
    meaning: 'The payment provider refused the request.',
    fix: 'Retry later; report the requestId if it persists.',
  },
  PROVIDER_RESPONSE_INVALID: {
    status: 502,
    meaning: 'The payment provider answered with something unusable.',
    fix: 'Retry later; report the requestId if it persists.',
  },
  PROVIDER_UNAVAILABLE: {
    status: 502,
    meaning: 'The payment provider could not be reached.',
    fix: 'Retry later with backoff.',
  },
  AUTH_UNAVAILABLE: {
    status: 503,
    meaning: 'The authentication store is unavailable, so authenticated surfaces fail closed.',
    fix: 'Stop and report. No credential works until the operator restores auth.',
    raisedBy: [AUTHENTICATED],
  },
  REFERRAL_UNAVAILABLE: {
    status: 503,
    meaning: 'The referral ledger is unavailable, so a referral code cannot be resolved.',
    fix: 'Retry later, or sign up without a code.',
  },
  BILLING_UNAVAILABLE: {
    status: 503,
    meaning: 'Billing is not configured on this deployment, or its store is unavailable.',
    fix: 'Everything else works; ask the operator to configure billing.',
  },
  SNAPSHOT_UNAVAILABLE: {
    status: 503,
    meaning: 'Restore points cannot be read right now.',
    fix: 'Retry later.',
  },
  ACCOUNT_BUSY: {
    status: 503,
    meaning: 'Another change to what this account owns (a new board, a transfer or a takeover) is still in progress.',
    fix: 'Retry after the Retry-After seconds.',
  },
  SHARING_BUSY: {
    status: 503,
    meaning:
      'Another invitation, resend or transfer offer of this board is taking its mail budget (one at a time, on every node) and held it too long.',
    fix: 'Retry after the Retry-After seconds.',
  },
  FEEDBACK_BUSY: {
    status: 503,
    meaning:
      'Another request is changing the same feedback and did not finish in time: an operator’s promotion of this entry, or posts that kept changing the board’s feedback. Nothing was changed by this request.',
    fix: 'Retry after the Retry-After seconds; a promotion that died is taken over by the next promote after two minutes.',
  },
  BOARD_BUSY: {
    status: 503,
    meaning: 'The board’s command queue is full.',
    fix: 'Retry after the Retry-After seconds.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    meaning: 'The service is starting or shutting down, or its store does not answer.',
    fix: 'Retry on another node or after a short wait.',
    raisedBy: ['every operation'],
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;
export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

export function errorSpec(code: ErrorCode): ErrorSpec {
  return ERRORS[code];
}

/** The places a code is raised that are not routes of the table (ErrorSpec.raisedBy). */
export const raisedApart = (code: ErrorCode): readonly string[] => errorSpec(code).raisedBy ?? [];
