// The route table: every operation group, in one list.
import type { Route } from '../http/route.js';
import { accountRoutes } from './account.js';
import { authRoutes } from './auth.js';
import { coordinationRoutes } from './coordination.js';
import { itemRoutes } from './items.js';
import { shoutRoutes } from './shouts.js';
import { doctrineRoutes } from './doctrine.js';
import { specRoutes } from './spec.js';
import { feedbackRoutes } from './feedback.js';
import { statusRoutes } from './status.js';
import { projectRoutes } from './projects.js';
import { tokenRoutes } from './tokens.js';
import type { RouteDeps } from './deps.js';
import { systemRoutes } from './system.js';
import { webRoutes } from './web.js';
import { billingRoutes } from './billing.js';
import { rewindRoutes } from './rewind.js';
import { sharingRoutes } from './sharing.js';
import { onboardingRoutes } from './onboarding.js';
import { deviceRoutes } from './device.js';
import { adminWatchRoutes } from './admin-watch.js';
import { adminPeopleRoutes } from './admin-people.js';
import { adminMoneyRoutes } from './admin-money.js';
import { adminDataRoutes } from './admin-data.js';
import { adminAccessRoutes } from './admin-access.js';
import { adminFeedbackRoutes } from './admin-feedback.js';

export function routeTable(deps: Omit<RouteDeps, 'routes'>): Route[] {
  const table: Route[] = [];
  const full: RouteDeps = { ...deps, routes: () => table };
  table.push(
    ...systemRoutes(full),
    ...authRoutes(full),
    ...accountRoutes(full),
    ...tokenRoutes(full),
    ...projectRoutes(full),
    ...itemRoutes(full),
    ...coordinationRoutes(full),
    ...shoutRoutes(full),
    ...doctrineRoutes(full),
    ...specRoutes(full),
    ...feedbackRoutes(full),
    ...statusRoutes(full),
    ...billingRoutes(full),
    ...rewindRoutes(full),
    ...sharingRoutes(full),
    ...onboardingRoutes(full),
    ...deviceRoutes(full),
    ...adminWatchRoutes(full),
    ...adminPeopleRoutes(full),
    ...adminMoneyRoutes(full),
    ...adminDataRoutes(full),
    ...adminAccessRoutes(full),
    ...adminFeedbackRoutes(full),
    ...webRoutes(full.web),
  );
  return table;
}
