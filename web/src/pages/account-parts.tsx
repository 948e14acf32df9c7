// The account page's parts its tabs share: a select field, a titled section, the names rule.
import type { ComponentChildren } from 'preact';
import { refuse } from './recovery.js';

/** The server's bound on a display or token name. */
export const NAME_MAX = 80;

export interface Option {
  value: string;
  label: string;
}

export function SelectField(props: {
  label: string;
  name: string;
  value: string;
  onChange: (v: string) => void;
  options: Option[];
  hint?: string;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <select
        name={props.name}
        value={props.value}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {props.hint ? <small>{props.hint}</small> : null}
    </label>
  );
}

/** A titled block of a tab; its heading names the region for assistive tech and tests. */
export function Section({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section class="panel form" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** The server's 1..max rule for a name, counted as `count` counts. */
export function checkName(
  value: string,
  what: string,
  max: number,
  code: string,
  count: (s: string) => number = (s) => s.length,
): string {
  const name = value.trim();
  if (!name) throw refuse(code, `The ${what} cannot be empty.`, `Type 1 to ${max} characters.`);
  if (count(name) > max) throw refuse(code, `The ${what} is at most ${max} characters.`, 'Shorten it.');
  return name;
}
