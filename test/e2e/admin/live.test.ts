import { embeddedStore } from '../../support/stores.js';
import { liveFlow } from './live-flow.js';

liveFlow('embedded', embeddedStore);
