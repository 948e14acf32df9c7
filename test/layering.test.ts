// The rules of direction: every room of the server stands on a layer of eslint/layers.js and
// imports only from lower ones. The lint refuses an import up or sideways, and a room placed nowhere.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS } from '../eslint/layers.js';

const eslint = new ESLint();

async function refusals(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages
    .filter((m) => m.ruleId === 'layers/imports-go-down' || m.ruleId === 'no-restricted-imports')
    .map((m) => m.message);
}

/** Each room beside the room of the next layer up, for probes: a file of `low` importing a file of `high`. */
const steps = LAYERS.slice(0, -1).flatMap((rooms, layer) =>
  rooms.map((low) => ({ low, high: LAYERS[layer + 1]![0]! })),
);

/** A path inside a room, and the specifier another room's probe uses to import it. */
const probeIn = (room: string): string => (room.endsWith('.ts') ? room : `${room}/layering-probe.ts`);
const specifier = (from: string, to: string): string => {
  const depth = from.split('/').length - 1;
  return `${'../'.repeat(depth)}${to.replace(/\.ts$/, '.js')}`;
};

describe('the layers of eslint/layers.js', () => {
  it('place every room of the server once', async () => {
    const placed = LAYERS.flat();
    expect(new Set(placed).size).toBe(placed.length);
    const { readdirSync, statSync } = await import('node:fs');
    const rooms = readdirSync('src').map((name) => `src/${name}`);
    rooms.push('machines', 'actors', 'store');
    const unplaced = rooms.filter(
      (room) => !placed.includes(room) && (statSync(room).isDirectory() || room.endsWith('.ts')),
    );
    expect(unplaced).toEqual([]);
  });

  it.each(steps)('refuse $low importing $high, the layer above', async ({ low, high }) => {
    const from = probeIn(low);
    const to = high.endsWith('.ts') ? high : `${high}/anything.ts`;
    const messages = await refusals(`export * from '${specifier(from, to)}';\n`, from);
    expect(messages.some((m) => m.includes('imports only from lower layers'))).toBe(true);
  });

  it('refuse an import sideways, between two rooms of one layer', async () => {
    const from = 'src/board/layering-probe.ts';
    const messages = await refusals(`export * from '../billing/plan.js';\n`, from);
    expect(messages).toEqual([expect.stringContaining('src/board (layer 4) imports src/billing (layer 4)')]);
  });

  it('refuse a room placed on no layer', async () => {
    const messages = await refusals(`export * from '../board/commands.js';\n`, 'src/newroom/layering-probe.ts');
    expect(messages).toEqual([expect.stringContaining('src/newroom stands on no layer')]);
  });

  it('let a room import its own files and lower rooms, and leave tests free', async () => {
    expect(
      await refusals(
        `export * from './commands.js';\nexport * from '../errors/app-error.js';\n`,
        'src/board/layering-probe.ts',
      ),
    ).toEqual([]);
    expect(await refusals(`export * from '../../src/server.js';\n`, 'test/layering-probe.test.ts')).toEqual([]);
  });

  // Lints every file of the server with types: past vitest's default 30 s when the machine is
  // busy (it failed so once in CI, at 31 s).
  it('hold for the whole server as it stands', { timeout: 120_000 }, async () => {
    const results = await eslint.lintFiles(['src/**/*.ts', 'actors/**/*.ts', 'machines/**/*.ts', 'store/**/*.ts']);
    const refused = results.flatMap((r) =>
      r.messages
        .filter((m) => m.ruleId === 'layers/imports-go-down')
        .map((m) => `${r.filePath}:${m.line}: ${m.message}`),
    );
    expect(refused).toEqual([]);
    expect(results.length).toBeGreaterThan(250);
  });

  it('still refuse adapters outside src/main.ts', async () => {
    expect(
      await refusals(
        "export { openEmbeddedStore } from '../../store/embedded/index.js';\n",
        'src/board/layering-probe.ts',
      ),
    ).toHaveLength(1);
  });
});
