// npm run bench [-- seconds concurrency]: throughput and latency of the running server (its own
// process, embedded store) on a probe, an authenticated identity read and a bcrypt login (the
// store's own figures are bench/store.ts). GET cases use wrk when installed (apt-get install wrk); fetch would be the bottleneck.
import { spawnSync } from 'node:child_process';
import { startNode } from './node.js';

const seconds = Number(process.argv[2] ?? 5);
const concurrency = Number(process.argv[3] ?? 32);

const hasWrk = spawnSync('wrk', ['--version']).error === undefined;

/** GET load from wrk (a separate native client) when installed, so the client is not the limit. */
async function loadGet(name: string, url: string, headers: Record<string, string> = {}): Promise<void> {
  if (!hasWrk) return load(`${name} (fetch client)`, () => fetch(url, { headers }));
  const args = [
    '-t1',
    `-c${concurrency}`,
    `-d${seconds}s`,
    '--latency',
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    url,
  ];
  const out = spawnSync('wrk', args, { encoding: 'utf8' }).stdout;
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1];
  const p50 = /50%\s+([\d.]+\w+)/.exec(out)?.[1];
  const p99 = /99%\s+([\d.]+\w+)/.exec(out)?.[1];
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? '0';
  console.log(
    `${`${name} (wrk)`.padEnd(34)} ${Number(rps).toFixed(0).padStart(7)} req/s   p50 ${p50}   p99 ${p99}   errors ${non2xx}`,
  );
}

async function load(name: string, request: () => Promise<Response>): Promise<void> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const res = await request();
        await res.arrayBuffer();
        if (!res.ok) errors++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(2);
  console.log(
    `${name.padEnd(34)} ${(latencies.length / seconds).toFixed(0).padStart(7)} req/s   p50 ${pct(0.5)} ms   p99 ${pct(0.99)} ms   errors ${errors}`,
  );
}

const node = await startNode({ LOG_LEVEL: 'warn' }); // its figures have always been taken at warn; bench/engine.ts measures the shipped default
try {
  const signup = await fetch(`${node.url}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.com', password: 'bench password 123' }),
  });
  const cookie = signup.headers.getSetCookie()[0]!.split(';')[0]!;
  console.log(`${seconds}s per case, ${concurrency} concurrent clients, node ${process.version}`);
  await loadGet('GET /healthz', `${node.url}/healthz`);
  await loadGet('GET /api/whoami (session)', `${node.url}/api/whoami`, { cookie });
  await load('POST /api/auth/login (bcrypt 4)', () =>
    fetch(`${node.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":"bench@example.com","password":"bench password 123"}',
    }),
  );
} finally {
  await node.stop();
}
