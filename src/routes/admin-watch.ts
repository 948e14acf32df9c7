// Operator routes: watching the service (DOMAIN.md "Operators"). Rules live in src/admin/; these only bind them.
import { z } from 'zod';
import { codebase } from '../admin/codebase.js';
import { defineRoute, type Route } from '../http/route.js';
import type { RouteDeps } from './deps.js';
import { adminBase } from './admin-shared.js';

const CodebaseResponse = z.object({
  name: z.string(),
  version: z.string(),
  commit: z.string().nullable(),
  node: z.string(),
  engines: z.record(z.string(), z.string().nullable()),
  store: z.enum(['embedded', 'mongo']),
  bus: z.enum(['local', 'redis']),
  nodeId: z.string(),
  startedAt: z.string(),
  configuration: z.record(z.string(), z.unknown()),
});

export function adminWatchRoutes(deps: RouteDeps): Route[] {
  const startedAt = deps.clock();
  return [
    defineRoute({
      ...adminBase,
      method: 'get',
      path: '/api/admin/codebase',
      summary: 'What this node runs: build, Node and engine versions, store and bus, node id, start time, and the configuration with secrets redacted.',
      bodyKind: 'none',
      errors: [],
      responses: { 200: { description: 'The running build.', schema: CodebaseResponse } },
      handler: () => ({ status: 200, body: codebase(deps.config, startedAt) }),
    }),
  ];
}
