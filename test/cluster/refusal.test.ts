// A refused command answers its caller the same whether the board's home is the node it entered or
// a peer: the refusal is mapped once, where the command is decided (BoardRouter), the home's answer
// crosses as JSON, and the entry node throws what it says. Both paths run through the real routers
// and board access; only the actor (which refuses) and the channel (JSON) are stand-ins.
import { describe, expect, it } from 'vitest';
import { BoardBusyError, BoardMissingError } from '../../actors/board-actor.js';
import type { BoardRegistry } from '../../actors/registry.js';
import { BoardError, type BoardErrorCode } from '../../machines/board-error.js';
import { RewindError } from '../../machines/restore-point.js';
import { BoardAccess, type BoardCall } from '../../src/board/board-access.js';
import type { BoardCommand } from '../../src/board/commands.js';
import type { PointPorts } from '../../src/board/restore-points.js';
import { BoardRouter } from '../../src/cluster/board-router.js';
import type { Forwarder } from '../../src/cluster/forwarder.js';
import type { Home, Homes } from '../../src/cluster/homes.js';
import { errorOf, refusalOf, type Refusal } from '../../src/cluster/wire.js';
import { AppError, isAppError } from '../../src/errors/app-error.js';
import { ERRORS } from '../../src/errors/registry.js';
import { StoreUnavailableError } from '../../store/ports/store.js';

/** What a caller is answered for what a board command threw, as the pipeline reads it (src/http/pipeline.ts). */
function answered(e: unknown) {
  if (e instanceof StoreUnavailableError) return 'store unavailable';
  const error = isAppError(e) ? e : new AppError('INTERNAL');
  return {
    code: error.code,
    status: error.status,
    message: error.code === 'INTERNAL' ? ERRORS.INTERNAL.meaning : error.message,
    details: error.details,
    headers: error.headers,
  };
}

const call = { boardId: 'b-1', principal: 'agent:a', role: 'member', within: null } as unknown as BoardCall;
const command: BoardCommand = { kind: 'comment', workId: 'W-1', text: 'hello', actor: 'agent:a' };
const points = {} as PointPorts;
const clock = () => 0;
/** A board whose actor refuses every command with `e`. */
const refusing = (e: unknown) => ({ get: () => ({ ask: () => Promise.reject(e) }) }) as unknown as BoardRegistry;
const homes = (home: Home) => ({ homeOf: async () => home, forget() {} }) as unknown as Homes;

async function thrownBy(access: BoardAccess): Promise<unknown> {
  try {
    await access.ask(call, command);
  } catch (e) {
    return e;
  }
  throw new Error('the command was not refused');
}

/** One node: the board's router decides the command here. */
async function onOneNode(e: unknown) {
  const registry = refusing(e);
  return answered(await thrownBy(new BoardAccess(registry, new BoardRouter({ registry, points, clock }))));
}

/** Two nodes: the entry node forwards the command to its home, whose answer crosses as JSON. */
async function forwarded(e: unknown) {
  const home = new BoardRouter({
    registry: refusing(e),
    points,
    clock,
    cluster: { homes: homes({ self: true }), forwarder: {} as Forwarder },
  });
  const channel = {
    send: async (_to: unknown, boardId: string, sent: BoardCommand) => ({
      outcome: 'answered',
      answer: JSON.parse(JSON.stringify(await home.decideForwarded(boardId, sent))),
    }),
  } as unknown as Forwarder;
  const here = refusing(new Error('the entry node decides nothing'));
  const entry = new BoardRouter({
    registry: here,
    points,
    clock,
    cluster: { homes: homes({ self: false, node: 'home', url: 'http://home.test' }), forwarder: channel },
  });
  return answered(await thrownBy(new BoardAccess(here, entry)));
}

/** Every code a board decision refuses with: a code added to the union must be added here (the compiler says so). */
const EVERY_BOARD_CODE: Record<BoardErrorCode, true> = {
  INVALID_INPUT: true,
  CONFLICTING_DEPENDENCIES: true,
  CROSS_PROJECT_FOLD: true,
  CROSS_PROJECT_PARENT: true,
  EVIDENCE_EXISTS: true,
  FINDING_REQUIRED: true,
  DOCTRINE_LINK_NOT_FOUND: true,
  PROJECT_SCOPE_DENIED: true,
  ROLE_REQUIRED: true,
  VERIFY_NOT_INDEPENDENT: true,
  NOT_SUBMITTER: true,
  ITEM_NOT_FOUND: true,
  DOCTRINE_NOT_FOUND: true,
  SPEC_CLAUSE_NOT_FOUND: true,
  HEAD_MISMATCH: true,
  INVALID_TRANSITION: true,
  LEASE_NOT_HELD: true,
  LEASE_EXPIRED: true,
  NOTHING_READY: true,
  ITEM_NOT_READY: true,
  VERSION_MISMATCH: true,
  DOCTRINE_EXISTS: true,
  DOCTRINE_BLIND_TEST_UNSET: true,
  BOARD_PAUSED: true,
};
const BOARD_CODES = Object.keys(EVERY_BOARD_CODE) as BoardErrorCode[];

describe('a forwarded refusal', () => {
  it.each(BOARD_CODES)('answers the board’s %s as one node does: code, status, message, details', async (code) => {
    const refused = new BoardError(code, `refused: ${code}`, { workId: 'W-7', state: 'ready' });
    const there = await forwarded(refused);
    expect(there).toEqual(await onOneNode(refused));
    expect(there).toMatchObject({ code, message: `refused: ${code}`, details: { workId: 'W-7' } });
  });

  it('answers a rewind’s refusal, a full mailbox (with Retry-After), a missing board and an AppError as one node does', async () => {
    for (const refused of [
      new RewindError('REWIND_VERSION_MISMATCH', 'the board changed', { expected: 'sha256:a', actual: 'sha256:b' }),
      new BoardBusyError('b-1'),
      new BoardMissingError('b-1'),
      new AppError('SNAPSHOT_UNAVAILABLE', 'restore points cannot be read', { boardId: 'b-1' }, { 'retry-after': '2' }),
    ])
      expect(await forwarded(refused), refused.name).toEqual(await onOneNode(refused));
    expect(await forwarded(new BoardBusyError('b-1'))).toMatchObject({
      code: 'BOARD_BUSY',
      headers: { 'retry-after': '1' },
    });
  });

  it('answers a store that did not answer as the entry node’s own outage', async () => {
    const refused = new StoreUnavailableError(new Error('no primary'));
    expect(await forwarded(refused)).toBe('store unavailable');
    expect(await onOneNode(refused)).toBe('store unavailable');
  });

  it('answers anything else INTERNAL, telling nothing of it', async () => {
    const bug = new TypeError('secret internals at /srv/x');
    expect(await forwarded(bug)).toEqual(await onOneNode(bug));
    expect(refusalOf(bug)).toEqual({ error: { code: 'INTERNAL', message: ERRORS.INTERNAL.meaning } });
  });

  it('reads a code its own registry lacks (a newer peer’s) as INTERNAL', () => {
    const fromNewer = { error: { code: 'NOT_A_CODE_HERE', message: 'new' } } as unknown as Refusal;
    expect(errorOf(fromNewer)).toMatchObject({ code: 'INTERNAL', status: 500 });
  });
});
