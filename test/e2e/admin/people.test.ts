import { embeddedStore } from '../../support/stores.js';
import { peopleFlow } from './people-flow.js';

peopleFlow('embedded', embeddedStore);
