// The machine as a transition function over a stored item: state + life + event in, the next
// state and life out with the board events to append, or a refusal with its code.
import { createActor, type AnyActorScope } from 'xstate';
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

const accepted = new Map<ItemState, ItemEventType[]>();

/** The events a state takes, read from the machine itself. */
export function acceptedEvents(state: ItemState): ItemEventType[] {
  let events = accepted.get(state);
  if (!events) accepted.set(state, (events = Object.keys(itemMachine.states[state]!.on) as ItemEventType[]));
  return events;
}

/** The actions a transition asks for, collected by the scope below (emitted events among them). */
let collected: { type: string; params?: unknown }[] = [];
/**
 * One inert scope for every step, as XState's `transition()` builds for each call (an actor of the
 * machine, never started), made once: building it was most of a step's cost (14 of 17 µs). The
 * machine spawns and invokes nothing, so nothing is kept in it from one step to the next.
 */
const inertScope: AnyActorScope = (() => {
  const self = createActor(itemMachine);
  return {
    self,
    defer: () => undefined,
    id: '',
    logger: () => undefined,
    sessionId: '',
    stopChild: () => undefined,
    system: self.system,
    emit: () => undefined,
    actionExecutor: (action) => void collected.push(action),
  } as AnyActorScope;
})();

export function initialLife(verify: ItemLife['verify'], maxAttempts: number): ItemLife {
  return { ...(itemMachine.config.context as ItemLife), verify, maxAttempts };
}

export function step(state: ItemState, life: ItemLife, event: ItemEvent): StepResult {
  const allowed = acceptedEvents(state);
  if (!allowed.includes(event.type)) return { kind: 'invalid', state, allowed };
  const before = itemMachine.resolveState({ value: state, context: life });
  collected = [];
  const after = itemMachine.transition(before, event, inertScope);
  // Emitted events come back as the built-in emit action, whose params carry the event.
  const emitted = collected
    .filter((a) => a.type === 'xstate.emit')
    .map((a) => (a.params as { event: ItemEmitted }).event);
  const refusal = emitted.find((e): e is Extract<ItemEmitted, { type: 'refused' }> => e.type === 'refused');
  if (refusal) return { kind: 'refused', code: refusal.code };
  if (after.value === before.value && after.context === before.context) return { kind: 'unchanged' };
  return { kind: 'moved', state: after.value as ItemState, life: after.context, emitted: emitted as BoardEmitted[] };
}
