// What a home node answers a forwarded command with, and how the entry node reads it back: the
// reply, or the refusal the caller would have had on one node (the same registry code and
// details), `moved` when the node is not the board's home, or `retry` when it took nothing. And
// how large a frame of the peers' channel can be: what the largest command or answer needs.
import { AppError, isAppError } from '../errors/app-error.js';
import { ERRORS, type ErrorCode } from '../errors/registry.js';
import { BATCH_MAX, DEPENDS_MAX, type BoardCommand } from '../board/commands.js';
import { sealFrame } from './signed-envelope.js';
import { boardFrom, type BoardItem } from '../../machines/board.js';
import { createItems, type NewItem } from '../../machines/board-commands.js';
import { StoreUnavailableError } from '../../store/ports/store.js';

/**
 * What the home answers for a command it refused: the registry error the caller gets, as it would
 * on one node, or a store that did not answer (which the entry node answers as its own outage).
 */
export type Refusal =
  | { error: { code: ErrorCode; message: string; details?: Record<string, unknown>; headers?: Record<string, string> } }
  | { storeUnavailable: true };

export type Answer =
  | { reply: unknown }
  | Refusal
  | { moved: true }
  /** Not decided (the home drains): the entry node may send it again, to the board's next home. */
  | { retry: true }
  /** Decided, but its answer is larger than a frame may be: to its caller, an answer lost. */
  | { tooLarge: true };

/**
 * The home's answer for a command it refused. The refusal was mapped where it was decided
 * (src/cluster/board-router.ts, the one mapping for local and forwarded commands), so
 * this only carries it: a registry error as it is, a store that did not answer as such, and
 * anything else as INTERNAL with nothing of it told.
 */
export function refusalOf(e: unknown): Refusal {
  if (e instanceof StoreUnavailableError) return { storeUnavailable: true };
  const { code, message, details, headers } = isAppError(e) ? e : new AppError('INTERNAL');
  return { error: { code, message, ...(details && { details }), ...(headers && { headers }) } };
}

/**
 * The entry node's side of `refusalOf`: the error the home mapped, thrown here as it is, so the
 * caller gets what one node would answer (test/cluster/refusal.test.ts). A code this node's
 * registry lacks (a newer peer's) is INTERNAL.
 */
export function errorOf(refusal: Refusal): AppError | StoreUnavailableError {
  if ('storeUnavailable' in refusal)
    return new StoreUnavailableError(new Error('the board’s home could not reach the store'));
  const { code, message, details, headers } = refusal.error;
  return new AppError(code in ERRORS ? code : 'INTERNAL', message, details, headers);
}

/** A work id at its widest, and a link sent at its shortest (`"a"`, a one-character ref) that becomes one. */
const WIDEST_WORK_ID = `W-${Number.MAX_SAFE_INTEGER}`;
const LINK_GROWTH = JSON.stringify(WIDEST_WORK_ID).length - '"a"'.length;
/** The latest time a Date holds (as wide as any time the board writes). */
const LATEST_TIME = 8.64e15;
/** Wider than any board id (64), principal or label (40) a command names. */
const WIDEST_NAME = 'x'.repeat(256);

/**
 * An item as the board makes it of one sent with no field (each at its default, or at its longest
 * value where the sender picks), at the widest work id and time: what making an item adds, at
 * most, to what was sent for it.
 */
function madeOfNothing(): BoardItem {
  const sent: NewItem = {
    title: '',
    description: '',
    type: 'chore',
    priority: 0,
    parentId: null,
    dependsOn: [],
    verify: 'required',
    maxAttempts: 20,
    criteria: [],
    doctrine: [],
    spec: [],
    labels: [],
  };
  return createItems([sent], WIDEST_NAME)(boardFrom([], Number.MAX_SAFE_INTEGER - 1, 1), LATEST_TIME).reply[0]!;
}
const MADE_ITEM_BYTES = Buffer.byteLength(JSON.stringify(madeOfNothing()));
/** A command's entry around its items, and an answer's around its reply, at their widest. */
const ENVELOPE_BYTES = Math.max(
  JSON.stringify([
    Number.MAX_SAFE_INTEGER,
    WIDEST_NAME,
    { kind: 'create', items: [], actor: WIDEST_NAME, once: WIDEST_NAME } satisfies BoardCommand,
  ]).length,
  JSON.stringify([Number.MAX_SAFE_INTEGER, { reply: [] } satisfies Answer]).length,
);
/** A sealed frame besides its text: its number at the widest, its signature, the two dots. */
const SEAL_BYTES = sealFrame(Buffer.alloc(32), 'to-home', Number.MAX_SAFE_INTEGER, '').length;

/**
 * The most one entry of a frame (a command, or its answer) can be, in bytes. The largest command
 * is a batch of BATCH_MAX items from a body of at most `bodyLimitBytes`, and its answer, those
 * items as made, is larger still: every field as long as it was sent or shorter (JSON escapes
 * never grow once parsed), the fields the board adds to each item, and each link as a work id at
 * its widest (links: a parent and DEPENDS_MAX dependencies an item, each at least `"a",` of the body).
 */
export function largestEntryBytes(bodyLimitBytes: number): number {
  const links = Math.min(Math.floor(bodyLimitBytes / '"a",'.length), BATCH_MAX * (DEPENDS_MAX + 1));
  return bodyLimitBytes + links * LINK_GROWTH + BATCH_MAX * MADE_ITEM_BYTES + ENVELOPE_BYTES;
}

/** The most one frame of the peers' channel can be, either way: the largest entry, alone in its list (`[…]`), sealed. */
export function peerFrameBytes(bodyLimitBytes: number): number {
  return SEAL_BYTES + '[]'.length + largestEntryBytes(bodyLimitBytes);
}
