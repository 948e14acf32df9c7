// The tools beyond the core eight, listed with BOARD_MCP_TOOLS=all (or `?tools=all` on /mcp):
// releasing and reporting on a lease, reading items and the log, superseding a submission, and
// the board's doctrine and spec.
import { z } from 'zod';
import { defineTool, leaseRefShape, READ, WRITE, type ToolDef } from './tool-set.js';
import type { BoardSession } from './session.js';

const workId = z.string().min(1).describe('A work id, like W-12.');
const slug = z.string().min(1).describe('The doctrine entry’s slug (lowercase letters, digits and dashes).');
const digest = (what: string) => z.string().describe(`${what}: sha256:<64 lowercase hex>.`);

export function extraTools(session: BoardSession): ToolDef[] {
  const { client, query } = session;
  const live = session.keepsLeases;
  const leaseRef = leaseRefShape(live);

  return [
    defineTool({
      name: 'release_lease',
      tier: 'extra',
      title: 'Release a lease',
      description:
        'Give a lease back without submitting, when you cannot finish the item: it is ready for another agent at once. Shout why, so the next one knows.',
      input: leaseRef,
      calls: ['POST /api/lease'],
      namesLease: true,
      annotations: WRITE,
      run: (args) => session.release(args),
    }),
    defineTool({
      name: 'report_progress',
      tier: 'extra',
      title: 'Report progress',
      description:
        'Say how far you are on an item you hold (shown on the board); it also extends the lease like a renewal.',
      input: {
        ...(live ? {} : { workId }),
        ...leaseRef,
        note: z.string().describe('Up to 2000 characters of coordination text.'),
      },
      calls: ['POST /api/items/{workId}/progress'],
      namesLease: true,
      annotations: WRITE,
      async run(args) {
        const ref = args;
        const lease = session.leaseOf(ref);
        const item = ref.workId ?? lease.workId ?? '';
        return client.post('/api/items/{workId}/progress', {
          params: { path: { workId: item }, query },
          body: { leaseId: lease.leaseId, note: ref.note },
        });
      },
    }),
    defineTool({
      name: 'read_item',
      tier: 'extra',
      title: 'Read an item',
      description:
        'One item in full: state, description, dependencies, lease, submission, verifications, and the doctrine entries it links.',
      input: { workId },
      calls: ['GET /api/items/{workId}'],
      annotations: READ,
      run: (args) => client.get('/api/items/{workId}', { params: { path: { workId: args.workId }, query } }),
    }),
    defineTool({
      name: 'list_items',
      tier: 'extra',
      title: 'List items',
      description:
        'The board’s items a page at a time, optionally in one state (pending, ready, claimed, awaiting_verify, verifying, done, blocked, cancelled); pass `next` as `after` for the following page.',
      input: {
        state: z
          .enum(['pending', 'ready', 'claimed', 'awaiting_verify', 'verifying', 'done', 'blocked', 'cancelled'])
          .optional(),
        after: workId.optional(),
        limit: z.number().int().optional().describe('1 to 1000; default 200.'),
      },
      calls: ['GET /api/items'],
      annotations: READ,
      run: (args) =>
        client.get('/api/items', {
          params: {
            query: {
              ...query,
              ...(args.state && { state: args.state }),
              ...(args.after && { after: args.after }),
              ...(args.limit !== undefined && { limit: String(args.limit) }),
            },
          },
        }),
    }),
    defineTool({
      name: 'supersede_work',
      tier: 'extra',
      title: 'Supersede a submission',
      description:
        'Replace the head you submitted with a newer one while the item awaits verification (you must be its submitter); a verifier holding it loses its lease and checks the new head.',
      input: { workId, head: z.string().describe('The newer commit id.') },
      calls: ['POST /api/supersede'],
      annotations: WRITE,
      run: (args) =>
        client.post('/api/supersede', { body: { workId: args.workId, head: args.head }, params: { query } }),
    }),
    defineTool({
      name: 'query_history',
      tier: 'extra',
      title: 'Query history',
      description:
        'The board’s event log, newest first, filtered by item, actor, event types and time range (within the plan’s retention). Page back with `before` = the `nextBefore` of the last answer.',
      input: {
        workId: workId.optional(),
        actor: z.string().optional().describe('A principal, like agent:<id>.'),
        types: z.array(z.string()).optional().describe('Event types, like lease.expired or item.submitted.'),
        from: z.string().optional().describe('ISO 8601 time.'),
        to: z.string().optional().describe('ISO 8601 time.'),
        before: z.number().int().optional(),
        limit: z.number().int().optional().describe('1 to 500; default 100.'),
      },
      calls: ['POST /api/history/query'],
      annotations: READ,
      run: (args) => client.post('/api/history/query', { body: args, params: { query } }),
    }),
    defineTool({
      name: 'read_doctrine',
      tier: 'extra',
      title: 'Read doctrine',
      description:
        'What this fleet has agreed on: each doctrine entry with its level (advisory, expected, required), status (proposed, ratified, rejected), agreements and blind-test results. Items name the entries they must follow in `doctrine`.',
      input: {},
      calls: ['GET /api/doctrine'],
      annotations: READ,
      run: () => client.get('/api/doctrine', { params: { query } }),
    }),
    defineTool({
      name: 'propose_doctrine',
      tier: 'extra',
      title: 'Propose doctrine',
      description:
        'Propose a rule the fleet should follow; it starts proposed, at level advisory, until an admin ratifies it. Others agree_doctrine to back it.',
      input: { slug, title: z.string(), text: z.string().describe('The rule, 1 to 4000 characters.') },
      calls: ['POST /api/doctrine'],
      annotations: WRITE,
      run: (args) => client.post('/api/doctrine', { body: args, params: { query } }),
    }),
    defineTool({
      name: 'agree_doctrine',
      tier: 'extra',
      title: 'Agree with doctrine',
      description: 'Back a proposed or ratified doctrine entry (once per agent).',
      input: { slug },
      calls: ['POST /api/doctrine/{slug}/agree'],
      annotations: { ...WRITE, idempotentHint: true },
      run: (args) => client.post('/api/doctrine/{slug}/agree', { params: { path: { slug: args.slug }, query } }),
    }),
    defineTool({
      name: 'take_blind_test',
      tier: 'extra',
      title: 'Take a blind test',
      description:
        'Show you know a ratified entry without being shown its answer: post the digest of your answer; it passes when it equals the entry’s expected digest.',
      input: { slug, answerDigest: digest('The digest of your answer') },
      calls: ['POST /api/doctrine/{slug}/blind-test'],
      annotations: WRITE,
      run: (args) =>
        client.post('/api/doctrine/{slug}/blind-test', {
          params: { path: { slug: args.slug }, query },
          body: { answerDigest: args.answerDigest },
        }),
    }),
    defineTool({
      name: 'read_spec',
      tier: 'extra',
      title: 'Read the spec',
      description:
        'What the fleet builds to: the spec clauses (S-<n>: draft, accepted, retired) with the items linking each; name a clauseId for one.',
      input: { clauseId: z.string().optional().describe('S-<n>; leave out for every clause.') },
      calls: ['GET /api/spec/{clauseId}', 'GET /api/spec'],
      annotations: READ,
      run: (args) =>
        args.clauseId
          ? client.get('/api/spec/{clauseId}', { params: { path: { clauseId: args.clauseId }, query } })
          : client.get('/api/spec', { params: { query } }),
    }),
    defineTool({
      name: 'add_spec_clause',
      tier: 'extra',
      title: 'Add a spec clause',
      description: 'Add a clause to the board’s spec (admin); it starts as a draft with the next id S-<n>.',
      input: { title: z.string(), text: z.string() },
      calls: ['POST /api/spec'],
      annotations: WRITE,
      run: (args) => client.post('/api/spec', { body: args, params: { query } }),
    }),
    defineTool({
      name: 'edit_spec_clause',
      tier: 'extra',
      title: 'Edit a spec clause',
      description:
        'Change a clause’s title, text or status (draft, accepted, retired) at the version you read (admin); a stale version is VERSION_MISMATCH and changes nothing.',
      input: {
        clauseId: z.string().min(1),
        version: z.number().int(),
        title: z.string().optional(),
        text: z.string().optional(),
        status: z.enum(['draft', 'accepted', 'retired']).optional(),
      },
      calls: ['PATCH /api/spec/{clauseId}'],
      annotations: WRITE,
      run: ({ clauseId, ...body }) =>
        client.patch('/api/spec/{clauseId}', { params: { path: { clauseId }, query }, body }),
    }),
  ];
}
