import { rewindFlow } from './rewind-flow.js';
import { embeddedStore } from '../support/stores.js';

rewindFlow('embedded', embeddedStore);
