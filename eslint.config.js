// Lint rules, including the rules of direction from ARCHITECTURE.md: the layers of the server's
// rooms in eslint/layers.js, and which room alone may import an adapter or uWebSockets.js.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './eslint/layers.js';

const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
// One config object's no-restricted-imports replaces another's, so the src/ rules are shared values.
const ADAPTERS = { group: ['**/store/embedded/**', '**/store/mongo/**'], message: 'Only src/main.ts picks adapters.' };
const UWS = { group: ['uWebSockets.js'], message: 'Only src/http/uws/ imports uWebSockets.js.' };
export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    files: ['machines/**/*.ts'],
    rules: restrict([
      {
        group: ['**/src/**', '**/actors/**', '**/store/**', 'node:*'],
        message: 'machines/ is pure: no I/O and nothing of ours.',
      },
    ]),
  },
  {
    files: ['actors/**/*.ts'],
    rules: restrict([
      {
        group: ['**/src/**', '**/store/embedded/**', '**/store/mongo/**'],
        message: 'actors/ use machines/ and store ports only.',
      },
    ]),
  },
  {
    files: ['store/**/*.ts'],
    rules: restrict([
      { group: ['**/src/**', '**/actors/**', '**/machines/**'], message: 'store/ knows nothing of the server.' },
    ]),
  },
  {
    files: ['store/embedded/**/*.ts'],
    rules: restrict([
      {
        group: ['**/src/**', '**/actors/**', '**/machines/**', '**/mongo/**'],
        message: 'store adapters import their ports only.',
      },
    ]),
  },
  {
    files: ['store/mongo/**/*.ts'],
    rules: restrict([
      {
        group: ['**/src/**', '**/actors/**', '**/machines/**', '**/embedded/**'],
        message: 'store adapters import their ports only.',
      },
    ]),
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/main.ts'],
    rules: restrict([ADAPTERS, UWS]),
  },
  {
    files: ['src/**/*.ts', 'actors/**/*.ts', 'machines/**/*.ts', 'store/**/*.ts'],
    plugins: { layers },
    rules: { 'layers/imports-go-down': 'error' },
  },
  {
    files: ['client/src/**/*.ts'],
    rules: restrict([
      {
        group: ['**/src/**', '**/machines/**', '**/actors/**', '**/store/**', '**/test/**', 'node:*'],
        message: 'client/src is a package of its own, for Node and browsers: nothing of the server, no node: module.',
      },
    ]),
  },
  {
    files: ['web/src/**/*.{ts,tsx}'],
    rules: restrict([
      {
        group: ['**/src/**', '**/machines/**', '**/actors/**', '**/store/**', '**/client/**'],
        message:
          'web/ knows the server through @agent-board/client alone (its types and its fetch wrapper), never by importing server code.',
      },
    ]),
  },
  { files: ['src/http/uws/**/*.ts', 'test/**/*.ts'], rules: { 'no-restricted-imports': 'off' } },
);
