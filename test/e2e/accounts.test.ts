import { embeddedStore } from '../support/stores.js';
import { accountsFlow } from './accounts-flow.js';

accountsFlow('embedded', embeddedStore);
