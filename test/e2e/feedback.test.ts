import { embeddedStore } from '../support/stores.js';
import { feedbackFlow } from './feedback-flow.js';

feedbackFlow('embedded', embeddedStore);
