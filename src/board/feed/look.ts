// Who reads what of a board: the view the one rule makes (src/board/visibility.ts), made once per
// request or subscription, and the reads it is refused. REST (BoardAccess.look) and sockets ask here.
import type { Identity, Role } from '../../auth/identity.js';
import { atLeast } from '../../auth/project-selection.js';
import { boardViewOf, eventAsSeen, mayRead, seesShout, seesWholeBoard } from '../visibility.js';
import type { BoardEvent, BoardRead, BoardView } from '../visibility.js';

/** One reader of a board: what it may see, and whether that is the whole board (then nothing is cut). */
export interface Reader {
  readonly view: BoardView;
  readonly whole: boolean;
}

/** The reads of `reads` a view takes nothing of, first one first (about `workId` when given). */
export const refusedRead = (view: BoardView, reads: readonly BoardRead[], workId?: string): BoardRead | undefined =>
  reads.find((what) => !mayRead(view, what, workId));

/**
 * The reader `identity` is when acting with `role` on a board (`operator`: a platform operator
 * watching it), holding the leases on the items of `held`, and the first of `reads` it may not ask
 * for: such a read is refused, not answered empty. What it may ask for is answered as the view
 * sees it (eventFor, hearsShout, the log reads).
 */
export function lookAt(
  identity: Identity,
  role: Role | 'operator',
  reads: readonly BoardRead[],
  workId?: string,
  held?: Iterable<string>,
): Reader & { refused: BoardRead | undefined } {
  const view = boardViewOf(identity, role, held);
  return { view, whole: seesWholeBoard(view), refused: refusedRead(view, reads, workId) };
}

/** The event as the reader may see it: itself, a copy cut to the reader's items, or null. */
export const eventFor = <E extends BoardEvent>(reader: Reader, event: E): E | null =>
  reader.whole ? event : eventAsSeen(reader.view, event);

/** Whether the reader hears a shout (a direct one only as its sender, addressee or an operator). */
export const hearsShout = (
  reader: Reader,
  shout: { from: string; to: string | null; workId: string | null },
): boolean => seesShout(reader.view, shout);

/**
 * Whether a reader acting with `role` is shown people's addresses where they have no display name:
 * the board's owner and admins (as its member list shows them) and operators; the others know
 * each other by name. Agents are named by their token's name for every reader of the board.
 */
export const seesAddresses = (role: Role | 'operator'): boolean => role === 'operator' || atLeast(role, 'admin');

/**
 * Whether `reads` by the view take in the items whose lease its principal holds: a view of some
 * items only (a resource token naming work ids) reading items, the log or shouts does.
 */
export const readsHeld = (view: BoardView, reads: readonly BoardRead[]): boolean =>
  view.items !== null && reads.some((what) => what === 'items' || what === 'log' || what === 'shouts');

/**
 * lookAt, with the leases the reader holds: `held` (read from the board only then) is asked for
 * when its reads take them in (readsHeld); any other is made without reading anything.
 */
export async function lookHolding(
  identity: Identity,
  role: Role | 'operator',
  reads: readonly BoardRead[],
  held: () => Promise<Iterable<string>>,
  workId?: string,
): Promise<Reader & { refused: BoardRead | undefined }> {
  const reader = lookAt(identity, role, reads, workId);
  if (!readsHeld(reader.view, reads)) return reader;
  return lookAt(identity, role, reads, workId, await held());
}
