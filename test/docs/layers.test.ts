// docs/internals.md lists the layers of eslint/layers.js, lowest first: a room moved or added in
// the table, and not in the page, fails here rather than leaving the page wrong.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LAYERS } from '../../eslint/layers.js';

const page = readFileSync(new URL('../../docs/internals.md', import.meta.url), 'utf8');

/** The rows of the layer table under "Rules of direction": each layer's rooms, in the page's order. */
function documentedLayers(): string[][] {
  const section = page.slice(
    page.indexOf('## Rules of direction'),
    page.indexOf('\n## ', page.indexOf('## Rules of direction') + 1),
  );
  return [...section.matchAll(/^\| (\d+) +\| (.+?) +\|$/gm)].map(([, layer, rooms], i) => {
    expect(Number(layer)).toBe(i);
    return [...rooms!.matchAll(/`([^`]+)`/g)].map(([, room]) => room!);
  });
}

describe('docs/internals.md "Rules of direction"', () => {
  it('lists every layer of eslint/layers.js, lowest first, with its rooms', () => {
    expect(documentedLayers()).toEqual(LAYERS);
  });
});
