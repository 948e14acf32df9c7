// The core eight tools, named for what an agent does. Their descriptions teach the lifecycle:
// board_status → claim_work → (work; renew_lease) → submit_work → another agent verify_work;
// shout / read_shouts to coordinate; create_items to add work.
import { z } from 'zod';
import { refusalOf } from './results.js';
import { defineTool, leaseRefShape, READ, WRITE, type ToolDef } from './tool-set.js';
import type { BoardSession } from './session.js';

const workId = z.string().min(1).describe('A work id, like W-12.');
const head = z
  .string()
  .describe(
    'The exact commit id you produced (7 to 64 lowercase hex characters, e.g. the output of `git rev-parse HEAD`).',
  );
const ttlSeconds = z
  .number()
  .int()
  .optional()
  .describe(
    'Lease length in seconds (the board’s minimum to 86400; default 900). Choose it to cover your longest quiet stretch.',
  );

const ItemSpec = z.strictObject({
  title: z.string().describe('What to do, in one line (1 to 200 characters).'),
  description: z
    .string()
    .optional()
    .describe('Detail for whoever claims it (coordination text: no code, diffs or secrets).'),
  ref: z.string().optional().describe('A name for this new item that dependsOn of the others in this call may use.'),
  dependsOn: z
    .array(z.string())
    .optional()
    .describe('Refs of items in this call, or work ids already on the board, that must be done first.'),
  verify: z
    .enum(['none', 'required'])
    .optional()
    .describe('required: an independent agent must verify the submitted head (two-key gate).'),
  priority: z.number().int().optional().describe('0 (most urgent) to 4; default 2.'),
  type: z.enum(['task', 'bug', 'chore', 'epic']).optional(),
  parentId: z.string().optional().describe('A work id (or a ref in this call) this item belongs under.'),
  labels: z.array(z.string()).optional(),
  criteria: z
    .array(z.string())
    .optional()
    .describe('Acceptance criteria as digests (sha256:<64 hex>) of text you keep.'),
  doctrine: z.array(z.string()).optional().describe('Slugs of the board’s doctrine entries this work must follow.'),
  spec: z.array(z.string()).optional().describe('Spec clause ids (S-<n>) this work implements.'),
});

export function coreTools(session: BoardSession): ToolDef[] {
  const { client, query } = session;
  const live = session.keepsLeases;
  const keepAlive = live
    ? 'This server keeps the lease alive for you while you keep calling board tools at least once per lease length; after a whole lease length of silence it lets the lease run out.'
    : 'Keep the leaseId: renew_lease with it before renewBy, and submit_work with it.';
  const leaseRef = leaseRefShape(live);

  return [
    defineTool({
      name: 'board_status',
      tier: 'core',
      title: 'Board status',
      description:
        'Start here, and come back whenever you are unsure. The board at a glance: counts by state, the head of the priority chain (what claim_work gives you next), active leases (yours listed under `you`), items awaiting verification, stalled items, agents online. Read-only.',
      input: {},
      calls: ['GET /api/status', ...session.refusals.principal],
      annotations: READ,
      async run() {
        const [status, principal] = await Promise.all([
          client.get('/api/status', { params: { query } }),
          session.principal(),
        ]);
        const mine = status.leases.filter((l) => l.holder === principal);
        return { you: { principal, leases: session.leaseReport() ?? mine }, board: status };
      },
    }),
    defineTool({
      name: 'claim_work',
      tier: 'core',
      title: 'Claim work',
      description:
        'Take an item under an exclusive, time-boxed lease before touching it. Leave out workId to get the head of the priority chain (pull-next), or name one. ' +
        'purpose "verify" claims an item another agent submitted, to check it (then verify_work). ' +
        `${keepAlive} Then do the work, commit, and submit_work the exact head. The answer is the lease and the item, yours to read while you hold it (item null, and itemUnread saying why, when it could not be read: the lease is yours all the same). NOTHING_READY means there is no work for you now: read_shouts or board_status, and try later.`,
      input: {
        workId: workId.optional().describe('The item to claim; leave out for the next ready one.'),
        purpose: z.enum(['work', 'verify']).optional().describe('work (default) or verify.'),
        ttlSeconds,
      },
      calls: ['POST /api/claim', 'GET /api/items/{workId}'],
      annotations: WRITE,
      async run(args) {
        const grant = await client.post('/api/claim', {
          body: {
            ...(args.workId && { workId: args.workId }),
            ...(args.purpose && { purpose: args.purpose }),
            ...(args.ttlSeconds !== undefined && { ttlSeconds: args.ttlSeconds }),
          },
          params: { query },
        });
        session.claimed(grant);
        // The lease is granted: nothing after this refuses the tool. The item is read as this
        // credential may see it: a holder reads the item it holds (src/board/visibility.ts).
        const read = await client
          .get('/api/items/{workId}', { params: { path: { workId: grant.workId }, query } })
          .then(
            (item) => ({ item }),
            (error: unknown) => {
              const { code, message } = refusalOf(error);
              return { item: null, itemUnread: `${code}: ${message}` };
            },
          );
        return { lease: grant, ...read };
      },
    }),
    defineTool({
      name: 'renew_lease',
      tier: 'core',
      title: 'Renew a lease',
      description: live
        ? 'Renew your lease now (this server already renews it while you keep calling board tools; call this before a long quiet stretch, or to change its length with ttlSeconds). A refusal (LEASE_EXPIRED, LEASE_NOT_HELD) means the lease is gone: stop working on the item.'
        : 'Extend your lease before its renewBy (half the lease length): it then lasts ttlSeconds (or its own length) from now, never past 24 h from the claim. A refusal (LEASE_EXPIRED, LEASE_NOT_HELD) means the lease is gone: stop working on the item.',
      input: { ...leaseRef, ttlSeconds },
      calls: ['POST /api/lease'],
      namesLease: true,
      annotations: { ...WRITE, idempotentHint: true },
      run: (args) => session.renew(args, args.ttlSeconds),
    }),
    defineTool({
      name: 'submit_work',
      tier: 'core',
      title: 'Submit work',
      description:
        'Finish an item: submit the exact head commit you produced under your work lease, after committing. The lease ends. ' +
        'An item with verify none is then done; verify required goes to awaiting_verify, for another agent to verify_work. ' +
        (live
          ? 'LEASE_EXPIRED, LEASE_NOT_HELD, or NO_LEASE_HERE after a LEASE LOST notice: the item is no longer yours; stop.'
          : 'LEASE_EXPIRED or LEASE_NOT_HELD: the item is no longer yours; stop.'),
      input: { ...leaseRef, head },
      calls: ['POST /api/submit'],
      namesLease: true,
      annotations: WRITE,
      run: (args) => session.submit(args, args.head),
    }),
    defineTool({
      name: 'verify_work',
      tier: 'core',
      title: 'Verify work',
      description:
        'The second key of the verify gate. After claim_work with purpose "verify", check the submitted head (the item’s submission.head) yourself, then record pass (the item is done) or fail with a finding digest (sha256:<64 hex> of your written finding; the item goes back to ready, or to pending while one of its dependencies is not done). ' +
        'You cannot verify work you did or held (VERIFY_NOT_INDEPENDENT); the head must be the one submitted (HEAD_MISMATCH).',
      input: {
        workId,
        head: z.string().describe('The submitted head you checked (the item’s submission.head).'),
        verdict: z.enum(['pass', 'fail']),
        finding: z.string().optional().describe('Required for fail: sha256:<64 hex> of your finding.'),
        evidence: z
          .array(z.string())
          .optional()
          .describe('Up to 20 digests (sha256:<64 hex>) of the evidence you kept.'),
      },
      calls: ['POST /api/verify'],
      annotations: WRITE,
      run: (args) =>
        session.verify({
          workId: args.workId,
          head: args.head,
          verdict: args.verdict,
          ...(args.finding && { finding: args.finding }),
          ...(args.evidence && { evidence: args.evidence }),
        }),
    }),
    defineTool({
      name: 'shout',
      tier: 'core',
      title: 'Shout',
      description:
        'Tell the other agents: broadcast to the board, about an item (workId), or to one agent (to: "agent:<id>", as board_status and read_shouts show them). Use it to hand off, ask, or warn. Coordination text only: no code, diffs, prompts or secrets.',
      input: {
        text: z.string().describe('1 to 2000 characters.'),
        to: z.string().optional().describe('A principal (agent:<id> or user:<id>) for a direct shout.'),
        workId: workId.optional().describe('The item the shout is about.'),
        kind: z.enum(['info', 'warn', 'request', 'handoff']).optional(),
      },
      calls: ['POST /api/shouts'],
      annotations: WRITE,
      run: (args) =>
        client.post('/api/shouts', {
          body: {
            text: args.text,
            ...(args.to && { to: args.to }),
            ...(args.workId && { workId: args.workId }),
            ...(args.kind && { kind: args.kind }),
          },
          params: { query },
        }),
    }),
    defineTool({
      name: 'read_shouts',
      tier: 'core',
      title: 'Read shouts',
      description:
        'Read what the other agents said. Without `since`: the newest shouts, newest first. With `since` (the `next` of your last read): the ones after it, oldest first. Shouts addressed to you are marked delivered; new ones also come first in your next tool result.',
      input: {
        since: z.string().optional().describe('A shout id: the shouts after it.'),
        workId: workId.optional().describe('Only the shouts about this item.'),
        limit: z.number().int().optional().describe('1 to 500; default 20.'),
      },
      calls: ['GET /api/shouts'],
      annotations: READ,
      run: (args) =>
        client.get('/api/shouts', {
          params: {
            query: {
              ...query,
              limit: String(args.limit ?? 20),
              ...(args.since ? { since: args.since } : { order: 'newest' as const }),
              ...(args.workId && { workId: args.workId }),
            },
          },
        }),
    }),
    defineTool({
      name: 'create_items',
      tier: 'core',
      title: 'Create items',
      description:
        'Add work to the board, 1 to 500 items at once, atomically (all or none). Chain them: give items a `ref` and list refs (or existing work ids) in `dependsOn`; an item becomes ready when everything it depends on is done. ' +
        'verify "required" puts the two-key gate on an item. Titles and descriptions are coordination text only.',
      input: { items: z.array(ItemSpec).describe('The new items, in order.') },
      calls: ['POST /api/items/batch'],
      annotations: WRITE,
      run: (args) => client.post('/api/items/batch', { body: { items: args.items }, params: { query } }),
    }),
  ];
}
