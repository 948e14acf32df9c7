import { embeddedStore } from '../../support/stores.js';
import { accessFlow } from './access-flow.js';

accessFlow('embedded', embeddedStore);
