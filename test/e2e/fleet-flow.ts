// The fleet simulation as a test: 20 agents, 300 items, real HTTP, checked from the event log.
import { describe, expect, it } from 'vitest';
import { serveStore, type OpenedStore } from '../support/stores.js';
import { runFleet } from '../../bench/fleet-sim.js';

export function fleetFlow(name: string, open: () => Promise<OpenedStore>): void {
  describe(`fleet on the ${name} store`, () => {
    const served = serveStore(open, { LEASE_MIN_TTL_SECONDS: '1' });

    it(
      '20 agents finish a 300-item random graph with expiries, releases, supersedes and failed verifications, and the log holds every invariant',
      { timeout: 600_000 },
      async () => {
        const report = await runFleet({
          baseUrls: [served.srv.url],
          agents: 20,
          items: 300,
          seed: 20261122,
          timeoutMs: 540_000,
        });
        expect(report.violations).toEqual([]);
        expect(report.events).toBeGreaterThan(300 * 3);
        for (const happened of ['expiries', 'releases', 'supersedes', 'failedVerifications'] as const)
          expect(report[happened], happened).toBeGreaterThan(0);
      },
    );
  });
}
