import { embeddedStore } from '../support/stores.js';
import { deviceFlow } from './device-flow.js';

deviceFlow('embedded', embeddedStore);
