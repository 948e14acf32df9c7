// A board's finished days of stats on the MongoDB wire server (the suite: stats-archive-suite.ts).
import { describe, inject } from 'vitest';
import { mongoStore } from '../support/stores.js';
import { statsByDay } from './stats-archive-suite.js';

const uri = inject('mongoUri');

describe.skipIf(!uri)('stats by day on the MongoDB wire server', () => statsByDay(mongoStore(uri!)));
