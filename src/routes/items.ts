// Items: create (one or an atomic batch), read, operator moves, override, progress.
import { z } from 'zod';
import type { NewItem } from '../../machines/board-commands.js';
import { BATCH_MAX, type ItemEventInput } from '../board/commands.js';
import { listItems } from '../../machines/board-queries.js';
import { ITEM_STATES } from '../../machines/item-types.js';
import { DOCTRINE_LEVELS, DOCTRINE_STATUSES } from '../../machines/doctrine-machine.js';
import { doctrineLinksOf } from '../board/doctrine.js';
import { AppError } from '../errors/app-error.js';
import { originOf } from '../audit-row.js';
import { gateLoweredAuditRow, overrideAuditRow } from '../board/override-audit.js';
import { captureBefore } from '../board/restore-points.js';
import { auditCommitted } from '../board/committed-audit.js';
import { RESOURCE_TOKEN_VIEW, seesItem } from '../board/visibility.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { WORK_ID } from '../board/schemas.js';
import { ItemInput as ItemFields, itemView, ItemView, LeaseGrant } from './board-schemas.js';
import { ForbiddenHead } from './schemas.js';

const ItemInput = ItemFields.extend({ head: ForbiddenHead });
const BatchInput = z.strictObject({
  items: z
    .array(ItemInput.extend({ ref: z.string().min(1).max(64).optional() }))
    .min(1)
    .max(BATCH_MAX),
});
const StateInput = z.strictObject({
  action: z.enum(['block', 'unblock', 'cancel', 'reopen']),
  reason: z.string().min(1).max(500).optional(),
});
const OverrideInput = z.strictObject({ reason: z.string().min(1).max(500) });
const ProgressInput = z.strictObject({
  leaseId: z.string().min(1).max(100),
  note: z.string().max(2000).default(''),
  head: ForbiddenHead,
});

type EditableFields = Omit<z.output<typeof ItemInput>, 'maxAttempts' | 'head'>;
type PatchBody = Partial<EditableFields> & { head?: string; expectedVersion?: number };
/**
 * The item's fields, each optional and without its creation default: zod 4 applies a default
 * even under optional, which would reset every field an edit does not name.
 */
const PatchInput: z.ZodType<PatchBody> = z.strictObject({
  ...Object.fromEntries(
    Object.entries(ItemInput.omit({ maxAttempts: true, head: true }).shape).map(([name, field]) => [
      name,
      (field instanceof z.ZodDefault ? field.unwrap() : field).optional(),
    ]),
  ),
  head: ForbiddenHead,
  expectedVersion: z.number().int().min(1).optional(),
}) as z.ZodType<PatchBody>;
const CommentInput = z.strictObject({ text: z.string().trim().min(1).max(2000), head: ForbiddenHead });
const ReorderInput = z.strictObject({ workIds: z.array(z.string().regex(WORK_ID)).min(1).max(500) });
const Comment = z.object({ seq: z.number().int(), by: z.string(), text: z.string(), at: z.string() });

const STATE_EVENT = { block: 'BLOCK', unblock: 'UNBLOCK', cancel: 'CANCEL', reopen: 'REOPEN' } as const;

const base = { group: 'items', auth: 'bearer-or-session', project: 'required', rateHeaders: true } as const;
const LIST_DEFAULT = 200;
const LIST_MAX = 1000;
const ListQuery = z.object({
  state: z.enum(ITEM_STATES).optional(),
  after: z
    .string()
    .regex(WORK_ID, 'must be a work id like W-12')
    .optional()
    .describe('The `next` of the previous page.'),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'must be an integer')
    .optional()
    .describe(`1 to ${LIST_MAX}, default ${LIST_DEFAULT}.`),
});
const ListResponse = z.object({ items: z.array(ItemView), next: z.string().nullable() });
const ItemDetail = ItemView.extend({
  doctrineLinks: z
    .array(
      z.object({
        slug: z.string(),
        level: z.enum(DOCTRINE_LEVELS).nullable(),
        status: z.enum(DOCTRINE_STATUSES).nullable(),
      }),
    )
    .describe(
      'Each linked doctrine entry’s level and status, in the order of `doctrine` (null for a slug the board holds no entry for).',
    ),
});
const LINKS =
  'Every `doctrine` slug must name an entry on this board (GET /api/doctrine), whatever its status: a rejected entry stays and may be ratified again; a missing one is 400 DOCTRINE_LINK_NOT_FOUND, checked with the board’s own decision.';

function checkNoHead(items: { head?: string }[]): void {
  if (items.some((i) => i.head !== undefined))
    throw new AppError('COMMIT_ID_FORBIDDEN', 'Items take no commit id; submit one with POST /api/submit.');
}

function workIdParam(raw: string | undefined): string {
  if (!raw || !WORK_ID.test(raw))
    throw new AppError('ITEM_NOT_FOUND', 'Work ids look like W-12.', { workId: raw ?? null });
  return raw;
}

/** What the items routes use of the server's dependencies. */
export type ItemDeps = Pick<RouteDeps, 'store' | 'boards' | 'logger'>;

export function itemRoutes(deps: ItemDeps): Route[] {
  const { boards } = deps;
  const newItems = (inputs: z.infer<typeof ItemInput>[]): NewItem[] => inputs.map(({ head: _head, ...rest }) => rest);

  return [
    defineRoute<z.infer<typeof ItemInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/items',
      sends: ['create'],
      summary: 'Create an item (member).',
      description: `Dependencies and the parent stay on this board; cycles, self-dependencies and dependencies on an own ancestor or descendant are refused. The item starts ready when every dependency is done, else pending. ${LINKS}`,
      bodyKind: 'json',
      body: ItemInput,
      rate: 'write',
      errors: [
        'COMMIT_ID_FORBIDDEN',
        'CONFLICTING_DEPENDENCIES',
        'CROSS_PROJECT_FOLD',
        'CROSS_PROJECT_PARENT',
        'DOCTRINE_LINK_NOT_FOUND',
        'ROLE_REQUIRED',
        'BOARD_BUSY',
      ],
      responses: { 201: { description: 'Created.', schema: ItemView } },
      async handler({ ctx, body }) {
        checkNoHead([body]);
        const call = boards.enter(ctx, 'member', 'items');
        const [created] = await boards.ask(call, { kind: 'create', items: newItems([body]), actor: call.principal });
        return { status: 201, body: itemView(created!) };
      },
    }),
    defineRoute<z.infer<typeof BatchInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/items/batch',
      sends: ['create'],
      summary: `Create up to ${BATCH_MAX} items atomically; \`ref\`s wire dependencies among the new items.`,
      description: LINKS,
      bodyKind: 'json',
      body: BatchInput,
      rate: 'write',
      errors: [
        'COMMIT_ID_FORBIDDEN',
        'CONFLICTING_DEPENDENCIES',
        'CROSS_PROJECT_FOLD',
        'CROSS_PROJECT_PARENT',
        'DOCTRINE_LINK_NOT_FOUND',
        'ROLE_REQUIRED',
        'BOARD_BUSY',
      ],
      responses: { 201: { description: 'All created, in order.', schema: z.object({ items: z.array(ItemView) }) } },
      async handler({ ctx, body }) {
        checkNoHead(body.items);
        const call = boards.enter(ctx, 'member', 'items');
        await captureBefore(deps.store, call, ctx.project!.plan, 'batch', ctx.now);
        const created = await boards.ask(call, {
          kind: 'create',
          items: body.items.map(({ head: _head, ...rest }) => rest),
          actor: call.principal,
        });
        return { status: 201, body: { items: created.map(itemView) } };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/items/{workId}',
      summary: 'Read one item (viewer), with the level and status of each doctrine entry it links.',
      bodyKind: 'none',
      rate: 'read',
      errors: ['ITEM_NOT_FOUND', 'ROLE_REQUIRED'],
      responses: { 200: { description: 'The item.', schema: ItemDetail } },
      async handler({ ctx }) {
        const workId = workIdParam(ctx.params.workId);
        const call = await boards.look(ctx, 'items', workId);
        const { board } = await call.actor.read();
        const item = board.items.get(workId);
        if (!item) throw new AppError('ITEM_NOT_FOUND', `No item ${workId} on this board.`, { workId });
        return { status: 200, body: { ...itemView(item), doctrineLinks: doctrineLinksOf(board, item) } };
      },
    }),
    defineRoute<undefined, z.infer<typeof ListQuery>>({
      ...base,
      method: 'get',
      path: '/api/items',
      summary: 'List the board’s items (viewer), optionally in one state, a page at a time.',
      description: `Pages follow the items’ key order; pass \`next\` as \`after\` for the next page (null on the last). The browser board reads its columns with it. ${RESOURCE_TOKEN_VIEW}`,
      bodyKind: 'none',
      query: ListQuery,
      rate: 'read',
      errors: ['ROLE_REQUIRED'],
      responses: { 200: { description: 'A page of items.', schema: ListResponse } },
      async handler({ ctx, query }) {
        const call = await boards.look(ctx, 'items');
        const { view } = call;
        const limit = Math.min(LIST_MAX, Math.max(1, Number(query.limit ?? LIST_DEFAULT)));
        const page = listItems((await call.actor.read()).board, {
          state: query.state,
          after: query.after,
          limit,
          // The one rule: a holder lists the items it holds beside those it names.
          within: view.items === null ? null : (workId) => seesItem(view, workId),
        });
        return { status: 200, body: { items: page.items.map(itemView), next: page.next } };
      },
    }),
    defineRoute<PatchBody, undefined>({
      ...base,
      method: 'patch',
      path: '/api/items/{workId}',
      sends: ['patch'],
      summary:
        'Edit an item’s fields (member; lowering the verify gate: admin); pass expectedVersion to refuse a stale edit.',
      description: `New dependencies follow the graph rules and move the item between pending and ready as they require. A claimed item (or one awaiting its verdict) may gain a dependency that is not done: its holder keeps the lease and may submit, and when the lease ends without a submission (release, expiry) or a verdict fails, the item goes to pending until that dependency is done, never to ready. The verify gate changes only while the item is pending, ready or blocked, and only an admin takes it from required to none (403 ROLE_REQUIRED for a member: passing an item without its independent verifier is an admin’s move, like POST /api/items/{workId}/override, and audited as it is, even when the answer is lost); raising it to required is anyone’s. ${LINKS}`,
      bodyKind: 'json',
      body: PatchInput,
      rate: 'write',
      errors: [
        'ITEM_NOT_FOUND',
        'VERSION_MISMATCH',
        'COMMIT_ID_FORBIDDEN',
        'CONFLICTING_DEPENDENCIES',
        'CROSS_PROJECT_FOLD',
        'CROSS_PROJECT_PARENT',
        'DOCTRINE_LINK_NOT_FOUND',
        'INVALID_TRANSITION',
        'ROLE_REQUIRED',
        'BOARD_BUSY',
      ],
      responses: { 200: { description: 'The edited item.', schema: ItemView } },
      async handler({ ctx, body }) {
        const workId = workIdParam(ctx.params.workId);
        const { head, expectedVersion, ...changes } = body;
        checkNoHead([{ head }]);
        const { call, mayLowerGate } = boards.enterEdit(ctx, workId);
        const { item, gateLowered } = await boards.ask(call, {
          kind: 'patch',
          workId,
          changes,
          ...(expectedVersion === undefined ? {} : { expectedVersion }),
          actor: call.principal,
          mayLowerGate,
        });
        if (gateLowered) {
          // Keyed by the item's version: the home's write from the committed event
          // (src/board/override-audit.ts) lands on the same row, never a second.
          const lowered = { workId, actor: call.principal, version: item.version, at: item.updatedAt };
          await auditCommitted(
            deps.store,
            gateLoweredAuditRow(call.boardId, lowered, originOf(ctx)),
            deps.logger,
            'item.gate.lower',
          );
        }
        return { status: 200, body: itemView(item) };
      },
    }),
    defineRoute<z.infer<typeof CommentInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/items/{workId}/comments',
      sends: ['comment'],
      summary: 'Comment on an item (member): coordination text, logged with the board’s events.',
      bodyKind: 'json',
      body: CommentInput,
      rate: 'write',
      errors: ['ITEM_NOT_FOUND', 'COMMIT_ID_FORBIDDEN', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: { 201: { description: 'Recorded.', schema: z.object({ workId: z.string() }) } },
      async handler({ ctx, body }) {
        checkNoHead([body]);
        const workId = workIdParam(ctx.params.workId);
        const call = boards.enter(ctx, 'member', 'items', workId);
        return {
          status: 201,
          body: await boards.ask(call, { kind: 'comment', workId, text: body.text, actor: call.principal }),
        };
      },
    }),
    defineRoute({
      ...base,
      method: 'get',
      path: '/api/items/{workId}/comments',
      summary: 'An item’s comments, oldest first (viewer).',
      bodyKind: 'none',
      rate: 'read',
      errors: ['ITEM_NOT_FOUND', 'ROLE_REQUIRED'],
      responses: { 200: { description: 'Comments.', schema: z.object({ comments: z.array(Comment) }) } },
      async handler({ ctx }) {
        const workId = workIdParam(ctx.params.workId);
        const call = await boards.look(ctx, 'items', workId);
        if (!(await call.actor.read()).board.items.has(workId))
          throw new AppError('ITEM_NOT_FOUND', `No item ${workId} on this board.`, { workId });
        await call.actor.syncLog();
        const events = await deps.store.events.find(
          { boardId: call.boardId, workId, type: 'item.comment' },
          { sort: [['seq', 1]], limit: 1000 },
        );
        return {
          status: 200,
          body: {
            comments: events.map((e) => ({
              seq: e.seq,
              by: e.actor,
              text: String(e.data.text),
              at: new Date(e.at).toISOString(),
            })),
          },
        };
      },
    }),
    defineRoute<z.infer<typeof ReorderInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/items/reorder',
      sends: ['reorder'],
      summary: 'Put the named items at the head of the priority chain, in this order (admin).',
      bodyKind: 'json',
      body: ReorderInput,
      rate: 'write',
      errors: ['ITEM_NOT_FOUND', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: {
        200: { description: 'The new head of the chain.', schema: z.object({ order: z.array(z.string()) }) },
      },
      async handler({ ctx, body }) {
        const call = boards.enter(ctx, 'admin', 'items');
        return {
          status: 200,
          body: await boards.ask(call, { kind: 'reorder', workIds: [...new Set(body.workIds)], actor: call.principal }),
        };
      },
    }),
    defineRoute<z.infer<typeof StateInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/items/{workId}/state',
      sends: ['event'],
      summary: 'Operator moves (admin): block (releases leases), unblock, cancel, reopen.',
      description:
        'Unblock and reopen land on ready when every dependency is done, else pending; reopening sends dependents not yet claimed back to pending.',
      bodyKind: 'json',
      body: StateInput,
      rate: 'write',
      errors: ['ITEM_NOT_FOUND', 'INVALID_TRANSITION', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: {
        200: { description: 'The item’s new state.', schema: z.object({ workId: z.string(), state: z.string() }) },
      },
      async handler({ ctx, body }) {
        const workId = workIdParam(ctx.params.workId);
        const call = boards.enter(ctx, 'admin', 'items', workId);
        const reason = body.reason ?? body.action;
        const type = STATE_EVENT[body.action];
        await captureBefore(
          deps.store,
          call,
          ctx.project!.plan,
          body.action === 'reopen' ? 'reopen' : 'state',
          ctx.now,
        );
        return {
          status: 200,
          body: await boards.ask(call, {
            kind: 'event',
            workId,
            actor: call.principal,
            event: { type, reason } as ItemEventInput,
          }),
        };
      },
    }),
    defineRoute<z.infer<typeof OverrideInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/items/{workId}/override',
      sends: ['override'],
      summary: 'Pass an item through the verify gate without verification (admin); audited, and the item says so.',
      description:
        'The audit row is written once the override stands, again until the store takes it. Repeated by the principal whose override the item holds (say its answer was lost), it answers 200 as the first did, changes nothing, and writes the row if it is missing.',
      bodyKind: 'json',
      body: OverrideInput,
      rate: 'write',
      errors: ['ITEM_NOT_FOUND', 'INVALID_TRANSITION', 'ROLE_REQUIRED', 'BOARD_BUSY'],
      responses: {
        200: {
          description: 'Done, marked as overridden.',
          schema: z.object({ workId: z.string(), state: z.string() }),
        },
      },
      async handler({ ctx, body }) {
        const workId = workIdParam(ctx.params.workId);
        const call = boards.enter(ctx, 'admin', 'items', workId);
        await captureBefore(deps.store, call, ctx.project!.plan, 'override', ctx.now);
        const { at, reason, ...result } = await boards.ask(call, {
          kind: 'override',
          workId,
          principal: call.principal,
          reason: body.reason,
        });
        // Keyed by the override (its time on the item): a repeat, or the home's write from the
        // committed event (src/board/override-audit.ts), lands on the same row, never a second.
        const row = overrideAuditRow(call.boardId, { workId, actor: call.principal, reason, at }, originOf(ctx));
        await auditCommitted(deps.store, row, deps.logger, 'item.override');
        return { status: 200, body: result };
      },
    }),
    defineRoute<z.infer<typeof ProgressInput>, undefined>({
      ...base,
      method: 'post',
      path: '/api/items/{workId}/progress',
      sends: ['progress'],
      summary: 'Report progress on a held item; extends the lease like a renewal.',
      bodyKind: 'json',
      body: ProgressInput,
      rate: 'lifecycle',
      // ITEM_NOT_FOUND: a path that is no work id; INVALID_TRANSITION: the lease held is a verify lease.
      errors: [
        'COMMIT_ID_FORBIDDEN',
        'ITEM_NOT_FOUND',
        'LEASE_NOT_HELD',
        'LEASE_EXPIRED',
        'INVALID_TRANSITION',
        'ROLE_REQUIRED',
        'BOARD_BUSY',
      ],
      responses: {
        200: {
          description: 'Recorded; the renewed lease.',
          schema: z.object({ workId: z.string(), lease: LeaseGrant }),
        },
      },
      async handler({ ctx, body }) {
        checkNoHead([body]);
        const workId = workIdParam(ctx.params.workId);
        const call = boards.enter(ctx, 'member', 'items', workId);
        return {
          status: 200,
          body: await boards.ask(call, {
            kind: 'progress',
            input: { principal: call.principal, workId, leaseId: body.leaseId, note: body.note },
          }),
        };
      },
    }),
  ];
}
