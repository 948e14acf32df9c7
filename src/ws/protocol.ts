// The WebSocket protocol (ARCHITECTURE.md): JSON messages, validated like every other input.
import { z } from 'zod';

export const TOPICS = ['items', 'leases', 'shouts', 'activity'] as const;
export type Topic = (typeof TOPICS)[number];

export const ClientMessage = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('subscribe'), boardId: z.string().min(1).max(64), topics: z.array(z.enum(TOPICS)).min(1).max(4).default(['activity']), since: z.number().int().min(0).optional() }),
  z.strictObject({ type: z.literal('unsubscribe'), boardId: z.string().min(1).max(64) }),
  z.strictObject({ type: z.literal('ping') }),
]);
export type ClientMessage = z.infer<typeof ClientMessage>;

/** Which topic a board event belongs to (activity carries every event). */
export function topicOf(type: string): Topic {
  if (type.startsWith('lease.')) return 'leases';
  if (type.startsWith('shout')) return 'shouts';
  return 'items';
}

/** Close codes the server uses. */
export const CLOSE = { slowConsumer: 4008, revoked: 4001, overBudget: 4029, shutdown: 1001, tooBig: 1009 } as const;

/** What one socket may cost: messages per window, boards watched at once. */
export const SOCKET_BUDGET = { messages: 100, windowMs: 10_000, subscriptions: 50 } as const;
