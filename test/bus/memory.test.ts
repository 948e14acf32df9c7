import { MemoryBus } from '../../src/bus/bus.js';
import { busContract } from './contract.js';

busContract('memory', async () => new MemoryBus());
