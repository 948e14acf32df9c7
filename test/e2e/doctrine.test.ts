import { embeddedStore } from '../support/stores.js';
import { doctrineFlow } from './doctrine-flow.js';

doctrineFlow('embedded', embeddedStore);
