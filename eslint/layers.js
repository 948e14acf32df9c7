// The rules of direction (ARCHITECTURE.md) as one table: every room of the server (a folder of
// src/, a file at src/'s top, and machines/, actors/, store/) stands on one layer, and a file may
// import from its own room or from a room on a lower layer, never sideways or up. A room the table
// does not place is refused too, so a new folder is placed on purpose.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Lowest first. Rooms on one layer know nothing of each other. */
export const LAYERS = [
  [
    'machines',
    'store',
    'src/errors',
    'src/log.ts',
    'src/plans.ts',
    'src/int-in-range.ts',
    'src/address-list.ts',
    'src/heap-growth.ts',
  ],
  ['actors', 'src/auth', 'src/config.ts', 'src/feedback', 'src/web'],
  ['src/bus', 'src/mail', 'src/request-context.ts', 'src/server-secret.ts'],
  ['src/ratelimit', 'src/metrics', 'src/audit-row.ts'],
  ['src/board', 'src/billing'],
  ['src/accounts', 'src/ws'],
  ['src/http'],
  ['src/admin', 'src/openapi'],
  ['src/cluster', 'src/mcp'],
  ['src/routes', 'src/cli'],
  ['src/server'],
  ['src/server.ts'],
  ['src/main.ts'],
];

const layerOf = new Map(LAYERS.flatMap((rooms, layer) => rooms.map((room) => [room, layer])));

/** The room a repository path stands in, or null when it is no room of the server (tests, web/, bench/...). */
export function roomOf(file) {
  const [top, second] = file.split('/');
  if (top === 'machines' || top === 'actors' || top === 'store') return top;
  if (top !== 'src' || second === undefined) return null;
  return `src/${second}`;
}

function source(file, specifier) {
  if (!specifier.startsWith('.')) return null;
  const target = path.relative(ROOT, path.resolve(path.dirname(file), specifier));
  return target.replace(/\.js$/, '.ts');
}

const importsGoDown = {
  meta: {
    type: 'problem',
    docs: { description: 'A room imports only from rooms on lower layers (eslint/layers.js).' },
    schema: [],
    messages: {
      up: '{{from}} (layer {{fromLayer}}) imports {{to}} (layer {{toLayer}}): a room imports only from lower layers (eslint/layers.js, ARCHITECTURE.md).',
      unplaced: '{{room}} stands on no layer: place it in eslint/layers.js.',
    },
  },
  create(context) {
    const file = path.relative(ROOT, context.filename);
    const from = roomOf(file);
    if (from === null) return {};
    const check = (node) => {
      const specifier = node.source?.value;
      if (typeof specifier !== 'string') return;
      const target = source(context.filename, specifier);
      const to = target === null ? null : roomOf(target);
      if (to === null || to === from) return;
      for (const room of [from, to]) {
        if (!layerOf.has(room)) return context.report({ node, messageId: 'unplaced', data: { room } });
      }
      const fromLayer = layerOf.get(from);
      const toLayer = layerOf.get(to);
      if (toLayer >= fromLayer) context.report({ node, messageId: 'up', data: { from, to, fromLayer, toLayer } });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default { rules: { 'imports-go-down': importsGoDown } };
