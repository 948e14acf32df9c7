// The machine as a transition function over a stored item: state + life + event in, the next
// state and life out with the board events to append, or a refusal with its code. The hot events
// (claim, renew, submit, verify) are decided from the machine's table (item-table.ts), the rest by
// XState's transition; which events a state takes is always read from the machine.
import { createActor, type AnyActorScope } from 'xstate';
import { itemMachine } from './item-machine.js';
import type { BoardEmitted, StepResult } from './item-result.js';
import { decideFromTable } from './item-table.js';
import type { ItemEmitted, ItemEvent, ItemEventType, ItemLife, ItemState } from './item-types.js';

export type { BoardEmitted, StepResult } from './item-result.js';

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

/** One step: INVALID_TRANSITION from the machine's nodes, then the table's answer or the machine's. */
export function step(state: ItemState, life: ItemLife, event: ItemEvent): StepResult {
  const allowed = acceptedEvents(state);
  if (!allowed.includes(event.type)) return { kind: 'invalid', state, allowed };
  return decideFromTable(state, life, event) ?? transition(state, life, event);
}

/** The machine's own answer for every event, through XState: the specification the table is held to. */
export function machineStep(state: ItemState, life: ItemLife, event: ItemEvent): StepResult {
  const allowed = acceptedEvents(state);
  if (!allowed.includes(event.type)) return { kind: 'invalid', state, allowed };
  return transition(state, life, event);
}

function transition(state: ItemState, life: ItemLife, event: ItemEvent): StepResult {
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
