// The human pages: changelog and dispatches, rendered from data kept here.

export interface Entry {
  date: string;
  title: string;
  body: string;
  anchor?: string;
}

export const CHANGELOG: Entry[] = [
  {
    date: '2026-11-22',
    title: '0.0.0-demo: sharing boards and bringing agents aboard',
    body: 'Owners and admins invite people by email (single-use links, 7 days, accepted by the invited and confirmed address), list members, change roles and remove members — on every node at once: tokens narrowed or revoked, sockets unsubscribed — and hand a board over with a transfer. Agents get tokens without anyone copying a secret: enrollment codes with a number of uses, the device flow (RFC 8628) with an approval page at /device, anonymous boards an agent starts alone and a person takes over later (with the claim secret, or a link the agent hands out), and provisioning for automation. Board limits hold under concurrent creations, transfers and takeovers. Pages: a board’s Members, the invitation page, device approval and board takeover.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: rewind',
    body: 'POST /api/account/rewind puts a Pro board’s work graph (or one subtree of it, with ~W-<n>) back as a restore point held it, after an exact confirmation and the fingerprint you previewed: one version-checked write that keeps an undo point, ends the leases on replaced or removed items (their holders hear lease.revoked, reason rewound; a renew says so), returns claimed and verifying items to ready and awaiting_verify, keeps work ids and fencing tokens counting up, pushes board.rewound to every node’s sockets and writes an audit row. Points are now also kept after ten quiet minutes, and are purged with the plan’s history retention. The account page has a Rewind section, and an open board reloads when it is rewound.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: Pro through Stripe, and restore points',
    body: 'A board’s owner can take it Pro through Stripe (GET /api/account/billing, checkout, portal, annual, and the signed webhook at /api/billing/webhook); the plan, its budgets and rate headers, board limit and retention follow the subscription at once, and a past_due subscription stays Pro for 7 days. Deleting an account cancels its live subscriptions first. Pro boards keep restore points of their work graph before every batch and operator move; GET /api/account/rewind lists them and previews what applying one would change (applying comes next). The account page has a Billing section.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: the browser board',
    body: 'Open the service’s root in a browser: sign up or in, list, create, rename, star and delete boards, and watch a board live: columns by state with holders and lease countdowns, the agents online and what they hold, shouts (broadcast, direct or about an item) with a composer, the activity stream and the dependency graph; items one by one or pasted in bulk; item detail with history, comments and the operator moves your role allows; account profile, email and password, service tokens and deletion. GET /api/items lists a board’s items a page at a time.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: hardening',
    body: 'Cookie-session writes now need the session’s CSRF token in X-CSRF-Token (csrfToken in the signup, login, change-password and change-email responses and in GET /api/auth/me), and browser writes are accepted only from PUBLIC_URL’s origin (Referer is checked when Origin is absent). Every character of a password counts (keyed pre-hash before bcrypt; older hashes are upgraded at the next login). Bodies that are not valid UTF-8, hold a lone surrogate or declare another charset are 400 INVALID_JSON. A token cannot outlive the token that issued it and manages only the tokens it issued (403 TOKEN_SCOPE_EXCEEDED). New items have no rank: ready items go by rank, then priority, then creation. Board refusals carry the nine rate headers. Sockets: at most 100 messages per 10 s (close 4029), 50 boards, one replay per board; a repeated subscribe merges its topics; messages over 64 KiB close with 1009. HEAD works on every GET route.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: boards cost what changes',
    body: 'Every board operation now works on maintained indexes (the pull order, lease deadlines, dependents, counts), so a claim costs the same on a board of 100 items as on one of 50,000; commands waiting on a board are committed together in one durable write, each caller still answered on its own; reads are served from the board a node holds while the store says it is the latest; metrics are kept as running aggregates; BOARD_RATE_SCALE lets a self-hosted node raise every budget. npm run bench compares the service with bare uWebSockets.js, Fastify, node:http, BullMQ and ws.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: the embedded store on LMDB',
    body: 'The default store is now LMDB under DATA_DIR: a write is acknowledged only once synced and a refused one is seen by nobody; a full disk answers 503 and the store recovers by itself once space is freed; indexed lookups and per-item board storage keep reads and commits independent of how much else is stored; one process per DATA_DIR with a lock the kernel releases; history, shouts, presence, audit, expired sessions and links are purged per plan retention. A DATA_DIR of the old journal format is refused at start.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: live boards',
    body: 'GET /api/ws: subscribe to a board’s events with resume from any seq, shouts pushed as they are posted, lease warnings to their holders, sockets closed when their credential is revoked or their board deleted, slow consumers cut off with close code 4008; Redis carries all of it across nodes, and while Redis is away every node keeps serving and catches its sockets up from the log when it returns.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: the board',
    body: 'Items in a dependency graph with a strict lifecycle, claims under exclusive leases with fencing tokens, submit and the two-key verify gate, supersede, operator moves and override, comments, reordering, shouts with direct delivery receipts, presence, status, activity, history, metrics, and per-principal rate budgets.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: accounts, tokens and projects',
    body: 'Signup with referral codes and a starred default project, login, logout, password and email change, password reset and email verification by single-use links, account deletion, profile with project selection, service tokens (account, workspace and resource scopes; reissue keeps the agent principal), and projects under /api/projects and /api/boards with cursor pagination.',
  },
  {
    date: '2026-11-22',
    title: '0.0.0-demo: foundation',
    body: 'Request pipeline with the contract conventions, the error registry at /api/errors, OpenAPI 3.1 at /docs/openapi.json, embedded and MongoDB stores, health and readiness probes.',
  },
];

export const DISPATCHES: Entry[] = [
  {
    date: '2026-11-22',
    title: 'How errors read',
    anchor: 'errors',
    body: 'Every error carries its code, status, meaning and fix, and a requestId to quote. GET /api/errors lists them all. observedResolution tells which operation callers usually succeeded with next, once at least three workspaces contributed within a day.',
  },
];

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderPage(title: string, entries: Entry[]): string {
  const items = entries
    .map(
      (e) =>
        `<article${e.anchor ? ` id="${escape(e.anchor)}"` : ''}><h2>${escape(e.title)}</h2><time>${escape(e.date)}</time><p>${escape(e.body)}</p></article>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><h1>${escape(title)}</h1>\n${items}\n</body></html>\n`;
}
