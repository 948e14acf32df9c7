// What one item step answers, whichever decides it: the machine (item-step.ts) or its table of
// hot transitions (item-table.ts).
import type { ItemEmitted, ItemEventType, ItemLife, ItemState, RefusalCode } from './item-types.js';

export type BoardEmitted = Exclude<ItemEmitted, { type: 'refused' }>;

export type StepResult =
  | { kind: 'moved'; state: ItemState; life: ItemLife; emitted: BoardEmitted[] }
  /** Accepted but nothing to do (an EXPIRE before the deadline). */
  | { kind: 'unchanged' }
  | { kind: 'refused'; code: RefusalCode }
  /** The state does not take this event at all: INVALID_TRANSITION. */
  | { kind: 'invalid'; state: ItemState; allowed: ItemEventType[] };
