import { describe, inject } from 'vitest';
import { mongoStore } from '../../support/stores.js';
import { importCutFlow } from './import-cut-short-flow.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('mongo', () => {
  importCutFlow('mongo', mongoStore(uri!));
});
