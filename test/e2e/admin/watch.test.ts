import { embeddedStore } from '../../support/stores.js';
import { watchFlow } from './watch-flow.js';

watchFlow('embedded', embeddedStore);
