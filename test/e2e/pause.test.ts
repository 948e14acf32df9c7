import { pauseFlow } from './pause-flow.js';
import { embeddedStore } from '../support/stores.js';

pauseFlow('embedded', embeddedStore);
