import { embeddedStore } from '../support/stores.js';
import { retentionFlow } from './retention-flow.js';

retentionFlow('embedded', embeddedStore);
