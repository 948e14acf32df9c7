// The client sorts events into topics exactly as the server does (src/ws/protocol.ts), so a
// subscriber filters what it asked for the same way the server sent it.
import { expect, it } from 'vitest';
import { topicOf as clientTopic, type Topic } from '../../client/src/messages.js';
import { TOPICS, topicOf as serverTopic } from '../../src/ws/protocol.js';

it('knows every topic the server has and sorts every event type as it does', () => {
  const all: readonly Topic[] = TOPICS;
  expect([...all].sort()).toEqual(
    (['items', 'leases', 'shouts', 'doctrine', 'activity', 'presence'] satisfies Topic[]).sort(),
  );
  for (const type of [
    'item.created',
    'item.state',
    'lease.granted',
    'lease.expired',
    'shout',
    'doctrine.proposed',
    'doctrine.blind_test',
    'spec.created',
    'spec.updated',
    'board.rewound',
    'board.paused',
    'items.reordered',
  ]) {
    expect(clientTopic(type), type).toBe(serverTopic(type));
  }
});
