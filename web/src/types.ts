// The server's reply shapes, taken from its own schemas rather than restated (type-only: nothing
// of the server reaches the bundle).
import type { z } from 'zod';
import type { ItemView, LeaseGrant } from '../../src/routes/board-schemas.js';
import type { ClientMessage, Topic } from '../../src/ws/protocol.js';

export type Item = z.infer<typeof ItemView>;
export type Grant = z.infer<typeof LeaseGrant>;
export type SocketMessage = ClientMessage;
export type { Topic };
