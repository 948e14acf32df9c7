import { embeddedStore } from '../support/stores.js';
import { outboxTakeover } from './outbox-takeover.js';

outboxTakeover('embedded', embeddedStore);
