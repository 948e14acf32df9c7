// The router's own 503 BOARD_BUSY (no home to be had within the command's deadline) reaches the
// caller of BoardAccess as a registry error with Retry-After, as a full mailbox's does: the router
// maps what it rejects with, so board access passes it on as it is.
import { describe, expect, it } from 'vitest';
import type { BoardRegistry } from '../../actors/registry.js';
import { BoardAccess, type BoardCall } from '../../src/board/board-access.js';
import type { BoardCommand } from '../../src/board/commands.js';
import type { PointPorts } from '../../src/board/restore-points.js';
import { BoardRouter, COMMAND_DEADLINE_MS } from '../../src/cluster/board-router.js';
import type { Forwarded, Forwarder } from '../../src/cluster/forwarder.js';
import type { Home, Homes } from '../../src/cluster/homes.js';
import { isAppError } from '../../src/errors/app-error.js';

const call = { boardId: 'b-1', principal: 'agent:a', role: 'member', within: null } as unknown as BoardCall;
const command: BoardCommand = { kind: 'comment', workId: 'W-1', text: 'hello', actor: 'agent:a' };
const points = {} as PointPorts;
const registry = {
  get: () => ({ ask: () => Promise.reject(new Error('the entry node decides nothing')) }),
} as unknown as BoardRegistry;
const elsewhere: Home = { self: false, node: 'home', url: 'http://home.test' };

function access(homes: Partial<Homes>, send: () => Promise<Forwarded>, clock: () => number = () => 0): BoardAccess {
  const forwarder = { send } as unknown as Forwarder;
  const router = new BoardRouter({
    registry,
    points,
    clock,
    cluster: { homes: { forget() {}, ...homes } as Homes, forwarder },
  });
  return new BoardAccess(registry, router);
}

async function refusal(board: BoardAccess): Promise<unknown> {
  try {
    await board.ask(call, command);
  } catch (e) {
    return e;
  }
  throw new Error('the command was not refused');
}

const expectBusy = (e: unknown) => {
  expect(isAppError(e), String(e)).toBe(true);
  expect(e).toMatchObject({ code: 'BOARD_BUSY', status: 503, headers: { 'retry-after': '1' } });
};

describe('the router’s own BOARD_BUSY', () => {
  it('is a registry error when Redis cannot say where the home is', async () => {
    const homes = {
      homeOf: () => Promise.reject(new Error('redis down')),
    };
    expectBusy(await refusal(access(homes, () => Promise.reject(new Error('not sent')))));
  });

  it('is a registry error when the home did not answer whether it decided', async () => {
    const homes = { homeOf: async () => elsewhere };
    expectBusy(await refusal(access(homes, async () => ({ outcome: 'unknown' }))));
  });

  it('is a registry error when the deadline passes before a home is reached', async () => {
    let now = 0;
    const homes = { homeOf: async () => elsewhere };
    const unreachable = async (): Promise<Forwarded> => {
      now += COMMAND_DEADLINE_MS;
      return { outcome: 'unreachable' };
    };
    expectBusy(await refusal(access(homes, unreachable, () => now)));
  });
});
