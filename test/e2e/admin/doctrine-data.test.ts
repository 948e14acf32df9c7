import { embeddedStore } from '../../support/stores.js';
import { doctrineDataFlow } from './doctrine-data-flow.js';

doctrineDataFlow('embedded', embeddedStore);
