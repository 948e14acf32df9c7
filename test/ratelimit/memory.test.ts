import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { limiterContract } from './contract.js';

limiterContract('memory', (clock) => new MemoryRateLimiter(clock));
