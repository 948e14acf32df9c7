// Small pieces every page uses: errors as message and fix, forms whose pending, success and
// failure show, confirmations, and time labels.
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { shown } from '../api.js';
import { agentNames, heardNames, me, now } from '../session.js';
import type { BoardEvent } from '../types.js';
import { eventWords } from './event-words.js';

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const e = shown(error);
  return (
    <div class="note error" role="alert">
      <strong>{e.message}</strong>
      <span>{e.fix}</span>
      <code>{e.code}</code>
    </div>
  );
}

/** Runs an async action with its pending state and error; the result is kept for a success note. */
export function useAction<A extends unknown[], R>(run: (...args: A) => Promise<R>) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<R | null>(null);
  const go = async (...args: A): Promise<R | undefined> => {
    setPending(true);
    setError(null);
    setDone(null);
    try {
      const result = await run(...args);
      setDone(result);
      return result;
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setPending(false);
    }
  };
  return { go, pending, error, done, reset: () => (setError(null), setDone(null)) };
}

/** A form that submits through `onSubmit` (never a navigation), with its error and pending state. */
export function Form(props: {
  onSubmit: () => void;
  pending: boolean;
  error: unknown;
  submit: string;
  children: ComponentChildren;
  class?: string;
  success?: string | null;
}) {
  const submit = (e: Event) => {
    e.preventDefault();
    if (!props.pending) props.onSubmit();
  };
  return (
    <form class={`form ${props.class ?? ''}`} onSubmit={submit} aria-busy={props.pending}>
      {props.children}
      <ErrorNote error={props.error} />
      {props.success ? (
        <div class="note ok" role="status">
          {props.success}
        </div>
      ) : null}
      <button type="submit" class="primary" disabled={props.pending}>
        {props.pending ? 'Working…' : props.submit}
      </button>
    </form>
  );
}

export function Field(props: {
  label: string;
  value: string;
  onInput: (v: string) => void;
  type?: 'text' | 'email' | 'password' | 'date' | 'number' | 'search';
  name?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  autocomplete?: string;
  placeholder?: string;
  hint?: string;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <input
        type={(props.type ?? 'text') as 'text'}
        name={props.name}
        value={props.value}
        required={props.required}
        minLength={props.minLength}
        maxLength={props.maxLength}
        autocomplete={props.autocomplete}
        placeholder={props.placeholder}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
      {props.hint ? <small>{props.hint}</small> : null}
    </label>
  );
}

/** A button that asks before it acts. */
export function ConfirmButton(props: {
  label: string;
  question: string;
  onConfirm: () => void;
  danger?: boolean;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  // The question replaces the button that had the focus: the focus moves to its answer (autofocus
  // acts only on page load) in the same commit, so no key pressed meanwhile lands on the page.
  useLayoutEffect(() => {
    if (asking) yes.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button
        type="button"
        class={props.danger ? 'danger' : ''}
        disabled={props.disabled}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={props.question}>
      <span>{props.question}</span>
      <button
        type="button"
        ref={yes}
        class={props.danger ? 'danger' : 'primary'}
        onClick={() => (setAsking(false), props.onConfirm())}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function ago(iso: string | null): string {
  if (!iso) return 'never';
  const s = Math.max(0, Math.round((now.value - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** Time left until `iso`, as m:ss (or h:mm:ss), ticking. */
export function Countdown({ until }: { until: string }) {
  const left = Math.round((Date.parse(until) - now.value) / 1000);
  if (left <= 0) return <span class="countdown late">expiring</span>;
  const h = Math.floor(left / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = String(left % 60).padStart(2, '0');
  return (
    <span
      class={`countdown ${left < 60 ? 'soon' : ''}`}
      title={`lease expires ${new Date(until).toLocaleTimeString()}`}
    >
      {h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`}
    </span>
  );
}

/**
 * `agent:…` / `user:…` as a person reads it: "you"; a token's name (one of yours, or one the server
 * named on a board you watch); a person's name as the board shows it to you; else a short id.
 */
export function who(principal: string | null | undefined): string {
  if (!principal) return '—';
  if (me.value && principal === `user:${me.value.id}`) return 'you';
  return (
    agentNames.value.get(principal) ??
    heardNames.value.get(principal) ??
    principal.replace(/^(agent|user):/, '').slice(0, 8)
  );
}

/** A principal by name (who), its id on hover. */
export function Who({ principal }: { principal: string | null | undefined }) {
  return (
    <span class="who" title={principal ?? undefined}>
      {who(principal)}
    </span>
  );
}

/** One line for a board event: its type in words (eventWords), item (or doctrine entry, or spec clause), and the move it made. */
export function describeEvent(e: BoardEvent): string {
  const data = e.data as {
    from?: string;
    to?: string;
    slug?: string;
    clauseId?: string;
    result?: string;
    fields?: string[];
  };
  const move = data.from && data.to ? ` ${data.from.replace('_', ' ')} → ${data.to.replace('_', ' ')}` : '';
  const subject = e.workId ?? data.slug ?? data.clauseId;
  const more = data.result ? ` ${data.result}` : data.fields ? ` (${data.fields.join(', ')})` : '';
  return `${eventWords(e.type)}${subject ? ` ${subject}` : ''}${move}${more}`;
}

/** A choice among the person's boards, shown only when there is more than one. */
export function BoardPicker({
  name,
  boards,
  value,
  onChange,
}: {
  name: string;
  boards: readonly { projectId: string; name: string }[];
  value: string | null;
  onChange: (projectId: string) => void;
}) {
  if (boards.length < 2) return null;
  return (
    <label class="field">
      <span>Board</span>
      <select name={name} value={value ?? ''} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {boards.map((p) => (
          <option key={p.projectId} value={p.projectId}>
            {p.name}
          </option>
        ))}
      </select>
    </label>
  );
}
