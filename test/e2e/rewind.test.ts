import { rewindFlow } from './rewind-flow.js';
import { rewindHistoryFlow } from './rewind-history-flow.js';
import { embeddedStore } from '../support/stores.js';

rewindFlow('embedded', embeddedStore);
rewindHistoryFlow('embedded', embeddedStore);
