import { embeddedStore } from '../support/stores.js';
import { fleetFlow } from './fleet-flow.js';

fleetFlow('embedded', embeddedStore);
