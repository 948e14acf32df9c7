import { embeddedStore } from '../../support/stores.js';
import { moneyFlow } from './money-flow.js';

moneyFlow('embedded', embeddedStore);
