// A board's finished days of stats on the embedded store (the suite: stats-archive-suite.ts).
import { describe } from 'vitest';
import { embeddedStore } from '../support/stores.js';
import { statsByDay } from './stats-archive-suite.js';

describe('stats by day', () => statsByDay(embeddedStore));
