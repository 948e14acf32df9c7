// agent-board claim, renew, release, submit, verify: the lifecycle from a terminal. A claim's lease
// id is kept in the config file, so the later commands name the item rather than the lease; a
// script may pass --lease instead. Nothing renews in the background here: renew before renewBy,
// or claim with a --ttl that covers the work (`agent-board mcp` keeps leases alive for an agent).
import { Argument, type Command } from 'commander';
import type { LeaseGrant } from '../../mcp/client.js';
import { configPath, readConfig, writeConfig, type StoredLease } from '../config.js';
import { cliOf, type Cli } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { until } from '../output.js';

const seconds = (value: string): number => {
  if (!/^\d+$/.test(value)) throw new UsageError(`not a number of seconds: ${value}`);
  return Number(value);
};

async function remember(cli: Cli, grant: LeaseGrant): Promise<void> {
  const path = configPath();
  const config = await readConfig(path);
  const others = (config.leases ?? []).filter(
    (l) =>
      !(l.url === cli.conn.baseUrl && l.workId === grant.workId && l.purpose === grant.purpose) &&
      Date.parse(l.expiresAt) > Date.now() - 86_400_000,
  );
  await writeConfig(
    {
      ...config,
      leases: [
        ...others,
        {
          url: cli.conn.baseUrl,
          workId: grant.workId,
          purpose: grant.purpose,
          leaseId: grant.leaseId,
          expiresAt: grant.expiresAt,
        },
      ],
    },
    path,
  );
}

async function forget(cli: Cli, leaseId: string): Promise<void> {
  const path = configPath();
  const config = await readConfig(path);
  if (!config.leases?.some((l) => l.leaseId === leaseId)) return;
  await writeConfig({ ...config, leases: config.leases.filter((l) => l.leaseId !== leaseId) }, path);
}

/** The lease --lease names, else the one stored for the item (work before verify). */
function leaseFor(cli: Cli, workId: string, given: string | undefined, purpose?: 'work' | 'verify'): string {
  if (given) return given;
  const stored = (cli.conn.config.leases ?? []).filter(
    (l: StoredLease) => l.url === cli.conn.baseUrl && l.workId === workId && (!purpose || l.purpose === purpose),
  );
  const lease = stored.find((l) => l.purpose === 'work') ?? stored[0];
  if (!lease) throw new UsageError(`no lease on ${workId} was claimed from here; pass --lease <leaseId>`);
  return lease.leaseId;
}

export function leaseCommands(program: Command): void {
  program
    .command('claim [workId]')
    .description('Take an item under an exclusive lease: the named one, or the next ready one')
    .option('--verify', 'claim an item awaiting verification (another agent submitted it)')
    .option('--ttl <seconds>', 'lease length (default 900)', seconds)
    .action(async (workId: string | undefined, o: { verify?: boolean; ttl?: number }, command: Command) => {
      const cli = await cliOf(command);
      const grant = await cli.client.post('/api/claim', {
        params: { query: cli.query },
        body: {
          ...(workId && { workId }),
          ...(o.verify && { purpose: 'verify' as const }),
          ...(o.ttl !== undefined && { ttlSeconds: o.ttl }),
        },
      });
      await remember(cli, grant);
      cli.out.result(grant, (g) => [
        `Claimed ${cli.out.paint('bold', g.workId)} for ${g.purpose}; the lease ends ${until(g.expiresAt)} (${g.expiresAt}).`,
        `Renew before ${g.renewBy}: agent-board renew ${g.workId}`,
        cli.out.paint('gray', `lease ${g.leaseId} (kept in ${configPath()})`),
      ]);
    });

  program
    .command('renew <workId>')
    .description('Extend a lease you hold')
    .option('--lease <leaseId>', 'the lease id (default: the one claimed from here)')
    .option('--ttl <seconds>', 'new length from now', seconds)
    .action(async (workId: string, o: { lease?: string; ttl?: number }, command: Command) => {
      const cli = await cliOf(command);
      const leaseId = leaseFor(cli, workId, o.lease);
      const reply = await cli.client.post('/api/lease', {
        params: { query: cli.query },
        body: { leaseId, action: 'renew', ...(o.ttl !== undefined && { ttlSeconds: o.ttl }) },
      });
      if (reply.lease) await remember(cli, reply.lease);
      else await forget(cli, leaseId);
      cli.out.result(reply, (r) =>
        r.lease
          ? `Renewed ${r.workId}: the lease ends ${until(r.lease.expiresAt)} (${r.lease.expiresAt}).`
          : `The lease on ${r.workId} was revoked (${r.reason ?? 'no reason given'}): stop work on it.`,
      );
      // A revoked lease is as gone as an expired one: the conflict code, so `renew W-1 && …` stops.
      if (!reply.lease) process.exitCode = EXIT.conflict;
    });

  program
    .command('release <workId>')
    .description('Give a lease back without submitting')
    .option('--lease <leaseId>', 'the lease id (default: the one claimed from here)')
    .action(async (workId: string, o: { lease?: string }, command: Command) => {
      const cli = await cliOf(command);
      const leaseId = leaseFor(cli, workId, o.lease);
      const reply = await cli.client.post('/api/lease', {
        params: { query: cli.query },
        body: { leaseId, action: 'release' },
      });
      await forget(cli, leaseId);
      cli.out.result(reply, (r) => `Released ${r.workId}; it is ready for others.`);
    });

  program
    .command('submit <workId> <head>')
    .description('Submit the exact head commit produced under your work lease; the lease ends')
    .option('--lease <leaseId>', 'the lease id (default: the one claimed from here)')
    .action(async (workId: string, head: string, o: { lease?: string }, command: Command) => {
      const cli = await cliOf(command);
      const leaseId = leaseFor(cli, workId, o.lease, 'work');
      const reply = await cli.client.post('/api/submit', { params: { query: cli.query }, body: { leaseId, head } });
      await forget(cli, leaseId);
      cli.out.result(reply, (r) => `Submitted ${head} on ${r.workId}: now ${cli.out.paint('bold', r.state)}.`);
    });

  program
    .command('verify')
    .description('Record your independent verdict on the submitted head (after claim --verify)')
    .argument('<workId>')
    .argument('<head>', 'the submitted head you checked')
    .addArgument(new Argument('<verdict>').choices(['pass', 'fail']))
    .option('--finding <digest>', 'sha256:<64 hex> of your finding (required for fail)')
    .option('--evidence <digests>', 'comma separated sha256 digests', (v: string) => v.split(','))
    .action(
      async (
        workId: string,
        head: string,
        verdict: 'pass' | 'fail',
        o: { finding?: string; evidence?: string[] },
        command: Command,
      ) => {
        const cli = await cliOf(command);
        const reply = await cli.client.post('/api/verify', {
          params: { query: cli.query },
          body: {
            workId,
            head,
            verdict,
            ...(o.finding && { finding: o.finding }),
            ...(o.evidence && { evidence: o.evidence }),
          },
        });
        const stored = (cli.conn.config.leases ?? []).find(
          (l) => l.url === cli.conn.baseUrl && l.workId === workId && l.purpose === 'verify',
        );
        if (stored) await forget(cli, stored.leaseId);
        cli.out.result(reply, (r) => `Verified ${r.workId} (${verdict}): now ${cli.out.paint('bold', r.state)}.`);
      },
    );
}
