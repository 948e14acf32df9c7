import { embeddedStore } from '../../support/stores.js';
import { dataFlow } from './data-flow.js';

dataFlow('embedded', embeddedStore);
