// The doctrine machine as a transition function over a stored entry: status + life + event in, the
// next status and life out with the board events to append, or a refusal with its code.
import { transition } from 'xstate';
import {
  doctrineMachine,
  type DoctrineEmitted,
  type DoctrineEvent,
  type DoctrineEventType,
  type DoctrineLife,
  type DoctrineRefusalCode,
  type DoctrineStatus,
} from './doctrine-machine.js';

export type DoctrineBoardEmitted = Exclude<DoctrineEmitted, { type: 'refused' }>;

export type DoctrineStepResult =
  | { kind: 'moved'; status: DoctrineStatus; life: DoctrineLife; emitted: DoctrineBoardEmitted[] }
  /** Accepted with nothing to change: a principal's second agreement, a level set to itself. */
  | { kind: 'unchanged' }
  | { kind: 'refused'; code: DoctrineRefusalCode }
  /** The status does not take this event at all: INVALID_TRANSITION. */
  | { kind: 'invalid'; status: DoctrineStatus; allowed: DoctrineEventType[] };

/** The events a status takes, read from the machine itself. */
export function doctrineEvents(status: DoctrineStatus): DoctrineEventType[] {
  return Object.keys(doctrineMachine.states[status]!.on) as DoctrineEventType[];
}

export function initialDoctrineLife(expectedDigest: string | null): DoctrineLife {
  return { ...(doctrineMachine.config.context as DoctrineLife), expectedDigest };
}

export function doctrineStep(status: DoctrineStatus, life: DoctrineLife, event: DoctrineEvent): DoctrineStepResult {
  const allowed = doctrineEvents(status);
  if (!allowed.includes(event.type)) return { kind: 'invalid', status, allowed };
  const before = doctrineMachine.resolveState({ value: status, context: life });
  const [after, actions] = transition(doctrineMachine, before, event);
  const emitted = (actions as { type: string; params?: unknown }[])
    .filter((a) => a.type === 'xstate.emit')
    .map((a) => (a.params as { event: DoctrineEmitted }).event);
  const refusal = emitted.find((e): e is Extract<DoctrineEmitted, { type: 'refused' }> => e.type === 'refused');
  if (refusal) return { kind: 'refused', code: refusal.code };
  if (after.value === before.value && after.context === before.context) return { kind: 'unchanged' };
  return {
    kind: 'moved',
    status: after.value as DoctrineStatus,
    life: after.context,
    emitted: emitted as DoctrineBoardEmitted[],
  };
}
