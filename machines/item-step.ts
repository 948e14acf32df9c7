// The machine as a transition function over a stored item: state + life + event in, the next
// state and life out with the board events to append, or a refusal with its code.
import { transition } from 'xstate';
import { itemMachine } from './item-machine.js';
import type { ItemEmitted, ItemEvent, ItemEventType, ItemLife, ItemState, RefusalCode } from './item-types.js';

export type BoardEmitted = Exclude<ItemEmitted, { type: 'refused' }>;

export type StepResult =
  | { kind: 'moved'; state: ItemState; life: ItemLife; emitted: BoardEmitted[] }
  /** Accepted but nothing to do (an EXPIRE before the deadline). */
  | { kind: 'unchanged' }
  | { kind: 'refused'; code: RefusalCode }
  /** The state does not take this event at all: INVALID_TRANSITION. */
  | { kind: 'invalid'; state: ItemState; allowed: ItemEventType[] };

/** The events a state takes, read from the machine itself. */
export function acceptedEvents(state: ItemState): ItemEventType[] {
  return Object.keys(itemMachine.states[state]!.on) as ItemEventType[];
}

export function initialLife(verify: ItemLife['verify'], maxAttempts: number): ItemLife {
  return { ...itemMachine.config.context as ItemLife, verify, maxAttempts };
}

export function step(state: ItemState, life: ItemLife, event: ItemEvent): StepResult {
  const allowed = acceptedEvents(state);
  if (!allowed.includes(event.type)) return { kind: 'invalid', state, allowed };
  const before = itemMachine.resolveState({ value: state, context: life });
  const [after, actions] = transition(itemMachine, before, event);
  // Emitted events come back as the built-in emit action, whose params carry the event.
  const emitted = (actions as { type: string; params?: unknown }[]).filter((a) => a.type === 'xstate.emit').map((a) => (a.params as { event: ItemEmitted }).event);
  const refusal = emitted.find((e): e is Extract<ItemEmitted, { type: 'refused' }> => e.type === 'refused');
  if (refusal) return { kind: 'refused', code: refusal.code };
  if (after.value === before.value && after.context === before.context) return { kind: 'unchanged' };
  return { kind: 'moved', state: after.value as ItemState, life: after.context, emitted: emitted as BoardEmitted[] };
}
