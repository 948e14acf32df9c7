// An unknown error a forwarded command meets on its home is answered INTERNAL with nothing of it
// told to the peer, so the home's router tells it, whole, to `onInternal` (the server logs it).
// A refusal the registry knows, and a store that did not answer, are the peer's to report.
import { describe, expect, it } from 'vitest';
import type { BoardRegistry } from '../../actors/registry.js';
import { BoardError } from '../../machines/board-error.js';
import type { BoardCommand } from '../../src/board/commands.js';
import type { PointPorts } from '../../src/board/restore-points.js';
import { BoardRouter } from '../../src/cluster/board-router.js';
import type { Forwarder } from '../../src/cluster/forwarder.js';
import type { Homes } from '../../src/cluster/homes.js';
import { ERRORS } from '../../src/errors/registry.js';
import { StoreUnavailableError } from '../../store/ports/store.js';

const command: BoardCommand = { kind: 'comment', workId: 'W-1', text: 'hello', actor: 'agent:a' };
const refusing = (e: unknown) => ({ get: () => ({ ask: () => Promise.reject(e) }) }) as unknown as BoardRegistry;
const home = { homeOf: async () => ({ self: true }), forget() {} } as unknown as Homes;

function homeRouter(e: unknown) {
  const told: [unknown, string, BoardCommand][] = [];
  const router = new BoardRouter({
    registry: refusing(e),
    points: {} as PointPorts,
    clock: () => 0,
    cluster: { homes: home, forwarder: {} as Forwarder },
    onInternal: (error, boardId, sent) => told.push([error, boardId, sent]),
  });
  return { router, told };
}

describe('a forwarded command’s unknown error', () => {
  it('is told to onInternal as it was thrown, with the board and command, and answered INTERNAL', async () => {
    const bug = new TypeError('secret internals at /srv/x');
    const { router, told } = homeRouter(bug);
    expect(await router.decideForwarded('b-1', command)).toEqual({
      error: { code: 'INTERNAL', message: ERRORS.INTERNAL.meaning },
    });
    expect(told).toEqual([[bug, 'b-1', command]]);
    expect((told[0]![0] as Error).stack).toContain('secret internals');
  });

  it('is not told for a refusal the registry knows, nor for a store that did not answer', async () => {
    for (const refused of [
      new BoardError('ITEM_NOT_FOUND', 'no W-1', { workId: 'W-1' }),
      new StoreUnavailableError(new Error('no primary')),
    ]) {
      const { router, told } = homeRouter(refused);
      expect(await router.decideForwarded('b-1', command)).not.toHaveProperty('reply');
      expect(told, refused.name).toEqual([]);
    }
  });
});
