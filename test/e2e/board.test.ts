import { embeddedStore } from '../support/stores.js';
import { boardFlow } from './board-flow.js';

boardFlow('embedded', embeddedStore);
