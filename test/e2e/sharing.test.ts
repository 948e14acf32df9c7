import { embeddedStore } from '../support/stores.js';
import { sharingFlow } from './sharing-flow.js';

sharingFlow('embedded', embeddedStore);
