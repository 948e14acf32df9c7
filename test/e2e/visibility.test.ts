import { embeddedStore } from '../support/stores.js';
import { visibilityFlow } from './visibility-flow.js';

visibilityFlow('embedded', embeddedStore);
