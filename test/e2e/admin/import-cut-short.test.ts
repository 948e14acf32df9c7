import { embeddedStore } from '../../support/stores.js';
import { importCutFlow } from './import-cut-short-flow.js';

importCutFlow('embedded', embeddedStore);
