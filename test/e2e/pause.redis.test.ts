// A rewind landing while a fleet works, on two nodes with board homes (one store, one Redis): the
// agents spread over both, the owner pauses and resumes on one node and previews and applies on
// the other, whose commands are forwarded to the board's home.
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { newBoard } from '../support/board.js';
import { makePro, webhookOnlyBilling } from '../support/billing.js';
import { twoNodesOnRedis, type RedisNodes } from '../support/redis-nodes.js';
import { pauseFleet } from './pause-fleet.js';

const url = inject('redisUrl');
const SECRET = 'whsec_pause_nodes';

describe.skipIf(!url)('pausing a board on two nodes with board homes', () => {
  let nodes: RedisNodes | undefined;
  beforeAll(async () => {
    nodes = await twoNodesOnRedis(url!, { env: webhookOnlyBilling(SECRET), homes: true });
  });
  afterAll(() => nodes?.stop());

  it(
    'lands a rewind while 20 agents on both nodes work at full speed: pause, preview, apply, resume',
    { timeout: 300_000 },
    async () => {
      const { a, b, store } = nodes!;
      const board = await newBoard(a.url);
      await makePro(b.url, store, board, SECRET);
      await pauseFleet([a.url, b.url], board);
    },
  );
});
