// Creating items on the board's page: one at a time, or many pasted one per line with their
// dependencies (`Title | after 1, W-12`).
import { useState } from 'preact/hooks';
import { ApiError, client } from '../api.js';
import { ago, Field, Form, useAction, who } from '../ui/kit.js';
import type { Pause } from './board-pause.js';

/** One item, or many pasted one per line: `Title | after 1, 3, W-12` (line numbers or work ids). */
export function NewItems({
  projectId,
  pause,
  operator,
}: {
  projectId: string;
  pause: Pause | null;
  operator: boolean;
}) {
  const [title, setTitle] = useState('');
  const [priority, setPriority] = useState('2');
  const [bulk, setBulk] = useState('');
  const one = useAction(async () => {
    const item = await client.post('/api/items', {
      params: { query: { projectId } },
      body: { title, priority: Number(priority) },
    });
    setTitle('');
    return `Created ${item.workId}.`;
  });
  const many = useAction(async () => {
    const items = parseBulk(bulk);
    const res = await client.post('/api/items/batch', { params: { query: { projectId } }, body: { items } });
    setBulk('');
    return `Created ${res.items.length} items (${res.items[0]?.workId}…${res.items.at(-1)?.workId}).`;
  });
  return (
    <section class="panel" style={{ marginTop: '1rem' }} aria-label="New items">
      <h2>New items</h2>
      {pause ? (
        <p class="muted" data-paused-note>
          New items wait while the board is paused ({who(pause.by)} paused it {ago(pause.at)}).{' '}
          {operator
            ? 'Resume it with Resume in the banner above to add items again.'
            : 'An owner or admin of the board resumes it; then you can add items again.'}
        </p>
      ) : null}
      <fieldset class="plain" disabled={pause !== null}>
        <div class="row" style={{ alignItems: 'start' }}>
          <div class="grow">
            <Form
              onSubmit={() => void one.go()}
              pending={one.pending}
              error={one.error}
              submit="Create item"
              success={one.done}
            >
              <Field label="Title" name="title" value={title} onInput={setTitle} required maxLength={200} />
              <label class="field">
                <span>Priority</span>
                <select
                  name="priority"
                  value={priority}
                  onChange={(e) => setPriority((e.target as HTMLSelectElement).value)}
                >
                  {[0, 1, 2, 3, 4].map((p) => (
                    <option value={p} key={p}>
                      P{p}
                      {p === 0 ? ' (highest)' : ''}
                    </option>
                  ))}
                </select>
              </label>
            </Form>
          </div>
          <div class="grow">
            <Form
              onSubmit={() => void many.go()}
              pending={many.pending}
              error={many.error}
              submit="Create all"
              success={many.done}
            >
              <label class="field">
                <span>Paste a list</span>
                <textarea
                  name="bulk"
                  value={bulk}
                  placeholder={'Design the schema\nWrite the migration | after 1\nShip it | after 2, W-4'}
                  onInput={(e) => setBulk((e.target as HTMLTextAreaElement).value)}
                />
                <small>One item per line; “| after 1, W-4” makes it depend on line 1 and on W-4.</small>
              </label>
            </Form>
          </div>
        </div>
      </fieldset>
    </section>
  );
}

/**
 * Lines into batch items: dependencies by line number become refs, work ids stay as they are. A
 * reference the list cannot mean (a line it does not have, the line itself, neither a number nor a
 * work id) is refused here, in the list's own terms, before anything is sent.
 */
export function parseBulk(text: string): { title: string; ref: string; dependsOn: string[] }[] {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const bad = (message: string) =>
    new ApiError(
      400,
      'INVALID_INPUT',
      message,
      'After “| after”, name lines of this list by number or items by work id (W-12).',
    );
  return lines.map((line, i) => {
    const [title, after = ''] = line.split(/\s*\|\s*after\s*/i);
    const deps = after
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((d) => {
        const says = `Line ${i + 1} says “after ${d}”`;
        if (/^\d+$/.test(d)) {
          const n = Number(d);
          if (n < 1 || n > lines.length)
            throw bad(`${says}; the list has ${lines.length} line${lines.length === 1 ? '' : 's'}.`);
          if (n === i + 1) throw bad(`${says}: an item cannot wait for itself.`);
          return `line-${n}`;
        }
        if (!/^W-\d+$/i.test(d)) throw bad(`${says}: that is neither a line number nor a work id.`);
        return d.toUpperCase();
      });
    return { title: title!.trim(), ref: `line-${i + 1}`, dependsOn: deps };
  });
}
