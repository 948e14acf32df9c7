// The MongoDB-wire server the benchmarks run on. MONGODB_URI when set; otherwise FerretDB 2 on
// PostgreSQL 15 with DocumentDB, started here through ../shared/mongo-wire/start.sh with DURABLE=1
// (fsync and synchronous commits on, as the embedded store syncs every commit), on free loopback
// ports and a data directory of its own, and stopped when the bench exits. Its processes' CPU
// (FerretDB, PostgreSQL and its backends) is read from /proc.
//   Needs, once, as root: ../shared/mongo-wire/build.sh ~/.cache/board-ci/bin (.ci/run runs it too).
//   MONGO_WIRE_DIR names the scripts' folder, MONGO_WIRE_BIN the folder holding ferretdb2.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';

export interface BenchMongo {
  uri: string;
  /** What the figures ran on, for the bench's heading. */
  label: string;
  /** CPU the store's processes have used so far, in µs; null when they are not known here. */
  cpuMicros(): number | null;
  /** Bytes of write-ahead log PostgreSQL has written so far (what the store wrote, durably); null when not known here. */
  walBytes(): number | null;
}

const SCRIPTS = process.env.MONGO_WIRE_DIR ?? fileURLToPath(new URL('../../shared/mongo-wire', import.meta.url));
const BIN = process.env.MONGO_WIRE_BIN ?? join(process.env.BOARD_CI_CACHE ?? join(homedir(), '.cache/board-ci'), 'bin');
const PG_CTL = '/usr/lib/postgresql/15/bin/pg_ctl';
const PSQL = '/usr/lib/postgresql/15/bin/psql';

/** utime + stime of a process (with `children`, also those of its children it has waited for), in µs; 0 when gone. */
function cpuOf(pid: number, children = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return (own + (children ? Number(fields[13]) + Number(fields[14]) : 0)) * 10_000;
  } catch {
    return 0;
  }
}

/** The processes whose parent is `pid` (PostgreSQL's backends under its postmaster). */
/** PostgreSQL's write-ahead log position on `port`, in bytes from its start; null when psql cannot tell. */
function walPosition(port: number): number | null {
  const run = spawnSync(
    'su',
    ['postgres', '-c', `${PSQL} -h 127.0.0.1 -p ${port} -d postgres -Atc "select pg_current_wal_lsn() - '0/0'"`],
    { encoding: 'utf8' },
  );
  const bytes = Number(run.stdout?.trim());
  return run.status === 0 && Number.isFinite(bytes) ? bytes : null;
}

function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A local mongod or FerretDB serving someone else's MONGODB_URI, for its CPU (the first found). */
function localServerPid(): number | null {
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (/ferretdb|mongod/.test(readFileSync(`/proc/${p}/cmdline`, 'utf8'))) return Number(p);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** Waits until the server answers a ping. */
async function answers(uri: string, within = 30_000): Promise<void> {
  const { MongoClient } = await import('mongodb');
  const until = Date.now() + within;
  for (;;) {
    try {
      const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 1000 });
      await client.db('admin').command({ ping: 1 });
      await client.close();
      return;
    } catch (e) {
      if (Date.now() > until) throw e;
    }
  }
}

/**
 * MONGODB_URI's server, else FerretDB 2 started here (stopped at exit); null when neither can be
 * had, with the reason printed.
 */
export async function benchMongo(bench: string): Promise<BenchMongo | null> {
  const given = process.env.MONGODB_URI;
  if (given) {
    const pid = localServerPid();
    return {
      uri: given,
      label: `MONGODB_URI (${given})`,
      cpuMicros: () => (pid ? cpuOf(pid) : null),
      walBytes: () => null,
    };
  }
  const start = join(SCRIPTS, 'start.sh');
  const missing = !existsSync(start)
    ? `${start} is missing (set MONGO_WIRE_DIR)`
    : !existsSync(join(BIN, 'ferretdb2'))
      ? `${join(BIN, 'ferretdb2')} is not built (run ${join(SCRIPTS, 'build.sh')} ${BIN} as root, or set MONGO_WIRE_BIN)`
      : process.getuid?.() !== 0
        ? 'start.sh runs PostgreSQL as user postgres and must be started as root'
        : null;
  if (missing) {
    console.log(`${bench}: no MONGODB_URI, and FerretDB 2 cannot be started here: ${missing}; skipped.`);
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-mongo-wire-'));
  const [pgPort, mongoPort] = [await freePort(), await freePort()];
  const run = spawnSync(start, [BIN, dir, String(pgPort), String(mongoPort)], {
    env: { ...process.env, DURABLE: '1' },
    encoding: 'utf8',
  });
  const [, postgres, , ferret] = (run.stdout ?? '').trim().split(/\s+/).map(Number);
  const stop = () => {
    if (ferret) spawnSync('kill', [String(ferret)]);
    if (existsSync(join(dir, 'pg', 'postmaster.pid')))
      spawnSync('su', ['postgres', '-c', `${PG_CTL} -D ${dir}/pg -m fast -w stop`], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stop);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  if (run.status !== 0 || !postgres || !ferret)
    throw new Error(`${start} failed (${run.status}): ${run.stderr || run.stdout}`);
  const uri = `mongodb://127.0.0.1:${mongoPort}/`;
  await answers(uri);
  return {
    uri,
    label: 'FerretDB 2.5 on PostgreSQL 15 with DocumentDB, DURABLE=1 (started here)',
    // The postmaster's own CPU with its backends' (live, and those that ended), and FerretDB's.
    cpuMicros: () => cpuOf(ferret) + cpuOf(postgres, true) + childrenOf(postgres).reduce((s, p) => s + cpuOf(p), 0),
    walBytes: () => walPosition(pgPort),
  };
}
