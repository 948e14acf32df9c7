// A shout to the board's watchers allowed to hear it: a broadcast one published once to the whole
// views and sent to each narrower view that hears it; a direct one sent socket by socket, and
// marked delivered once it reached its addressee.
import type { ShoutNotice } from '../board/notices.js';
import { hearsShout } from '../board/feed/look.js';
import type { Store } from '../../store/ports/store.js';
import { transmit } from './connection.js';
import type { Subscriptions } from './subscriptions.js';
import { hearsShouts, shoutsTopic } from './topics.js';

export type Shout = ShoutNotice['shout'];

export interface ShoutFanoutDeps {
  subscriptions: Pick<Subscriptions, 'watchersOf' | 'narrowOf'>;
  shouts: Pick<Store['shouts'], 'get' | 'update'>;
  /** One message to every socket joined to `topic` (HubDeps.publish). */
  publish(topic: string, message: Uint8Array): void;
  clock: () => number;
}

export function fanOutShout(deps: ShoutFanoutDeps, boardId: string, shout: Shout): void {
  const message = Buffer.from(
    JSON.stringify({ type: 'shout', boardId, shout: { ...shout, at: new Date(shout.at).toISOString() } }),
  );
  const watchers = deps.subscriptions.watchersOf(boardId);
  if (shout.to === null) {
    deps.publish(shoutsTopic(boardId), message); // the whole views'
    for (const conn of deps.subscriptions.narrowOf(boardId) ?? []) {
      const sub = watchers?.get(conn);
      if (sub && hearsShouts(sub.topics) && hearsShout(sub, shout)) transmit(conn, message);
    }
    return;
  }
  let delivered = false;
  for (const [conn, sub] of watchers ?? []) {
    if (!hearsShouts(sub.topics) || !hearsShout(sub, shout)) continue;
    if (transmit(conn, message) && conn.identity.principal === shout.to) delivered = true;
  }
  if (delivered) markDelivered(deps, shout.id);
}

/** Reaching its addressee is a direct shout's delivery (as reading it over REST is). */
function markDelivered(deps: ShoutFanoutDeps, shoutId: string): void {
  void deps.shouts
    .get(shoutId)
    .then((s) =>
      s && s.deliveredAt === null ? deps.shouts.update(s._id, s.version, { deliveredAt: deps.clock() }) : null,
    )
    .catch(() => undefined);
}
