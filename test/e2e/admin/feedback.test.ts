import { embeddedStore } from '../../support/stores.js';
import { adminFeedbackFlow } from './feedback-flow.js';

adminFeedbackFlow('embedded', embeddedStore);
