// deploy/compose.yaml cannot run here (no container engine can pull its images), so it is checked
// statically, as the deployment would read it: Compose's variable interpolation applied, every
// board node's environment passed through the node's own configuration check, and the wiring
// between the services (replica set, Redis, the proxy's trusted address, the proxy's upstreams
// over HTTP/1.1 with WebSocket upgrades, the build context holding the Dockerfile).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';

const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const FILE = join(DEPLOY, 'compose.yaml');

interface Service {
  build?: string | { context: string };
  image?: string;
  environment?: Record<string, string> | string[];
  depends_on?: string[] | Record<string, { condition: string }>;
  networks?: string[] | Record<string, { ipv4_address?: string } | null>;
  volumes?: string[];
  command?: string | string[];
  healthcheck?: unknown;
}

/** Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, $$. */
function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(
    /\$\$|\$\{(\w+)(?:(:?[-?])([^}]*))?\}/g,
    (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
      if (whole === '$$') return '$';
      const value = vars[name!];
      const unset = op?.startsWith(':') ? !value : value === undefined;
      if (op?.endsWith('?') && unset) throw new Error(`required variable ${name}: ${arg}`);
      if (op?.endsWith('-') && unset) return arg ?? '';
      return value ?? '';
    },
  );
}

function load(vars: Record<string, string>): {
  services: Record<string, Service>;
  networks: Record<string, { ipam?: { config?: { subnet: string }[] } }>;
} {
  return parse(interpolate(readFileSync(FILE, 'utf8'), vars), { merge: true }) as ReturnType<typeof load>;
}

const env = (s: Service): Record<string, string> =>
  Array.isArray(s.environment)
    ? Object.fromEntries(s.environment.map((e) => e.split(/=(.*)/s).slice(0, 2)))
    : (s.environment ?? {});
const dependsOn = (s: Service): string[] =>
  Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
const VARS = { SECRET_KEY: 'k'.repeat(48), METRICS_TOKEN: 't'.repeat(24) };

describe('deploy/compose.yaml (static)', () => {
  const { services, networks } = load(VARS);
  const boards = Object.keys(services).filter((n) => /^board-\d+$/.test(n));

  it('refuses to start without the secrets it cannot default (SECRET_KEY, METRICS_TOKEN)', () => {
    expect(() => load({ METRICS_TOKEN: VARS.METRICS_TOKEN })).toThrow(/required variable SECRET_KEY/);
    expect(() => load({ SECRET_KEY: VARS.SECRET_KEY })).toThrow(/required variable METRICS_TOKEN/);
  });

  it('has several board nodes built from this repository, each passing the node’s configuration check for MongoDB, Redis, a trusted proxy and metrics', () => {
    expect(boards.length).toBeGreaterThanOrEqual(2);
    for (const name of boards) {
      const s = services[name]!;
      const context = typeof s.build === 'string' ? s.build : s.build!.context;
      expect(existsSync(join(resolve(DEPLOY, context), 'Dockerfile')), name).toBe(true);
      const config = loadConfig(env(s));
      expect(config.store).toMatchObject({ kind: 'mongo' });
      expect(config.redisUrl).toBeDefined();
      expect(config.secretKey).toBe(VARS.SECRET_KEY);
      expect(config.metrics).toMatchObject({ port: 9464, token: VARS.METRICS_TOKEN });
      expect(config.trustedProxies.entries.length).toBeGreaterThan(0);
    }
    // Every node shares one secret, one store and one bus.
    expect(new Set(boards.map((n) => JSON.stringify(env(services[n]!)))).size).toBe(1);
  });

  it('points the nodes at a MongoDB replica set and a Redis of its own, started first', () => {
    const e = env(services[boards[0]!]!);
    const uri = new URL(e.MONGODB_URI!);
    const replicaSet = uri.searchParams.get('replicaSet');
    expect(replicaSet).toBeTruthy();
    expect(services[uri.hostname]!.command).toEqual(expect.arrayContaining(['--replSet', replicaSet]));
    expect(String(services['mongo-init']!.command)).toContain(`_id: '${replicaSet}'`);
    expect(services[new URL(e.REDIS_URL!).hostname]).toBeDefined();
    for (const name of Object.keys(services))
      for (const dep of dependsOn(services[name]!)) expect(services[dep], `${name} depends on ${dep}`).toBeDefined();
    for (const name of boards)
      expect(dependsOn(services[name]!)).toEqual(expect.arrayContaining(['mongo-init', 'redis']));
  });

  it('trusts exactly the proxy’s fixed address, inside the network it shares with the nodes', () => {
    const proxy = services.proxy!;
    const nets = proxy.networks as Record<string, { ipv4_address?: string }>;
    const [net, { ipv4_address: address } = {}] = Object.entries(nets)[0]!;
    expect(address).toBeDefined();
    const config = loadConfig(env(services[boards[0]!]!));
    expect(config.trustedProxies.trusts(address!)).toBe(true);
    expect(config.trustedProxies.trusts('172.28.0.99')).toBe(false);
    const [base, bits] = networks[net]!.ipam!.config![0]!.subnet.split('/');
    const prefix = (ip: string) =>
      ip
        .split('.')
        .map(Number)
        .reduce((a, b) => a * 256 + b, 0) >>>
      (32 - Number(bits));
    expect(prefix(address!)).toBe(prefix(base!));
    for (const name of boards) expect(services[name]!.networks).toContain(net);
    expect(config.forwardedHeader).toBe('x-forwarded-for');
  });

  it('has the proxy reach every node over HTTP/1.1, pass WebSocket upgrades and append X-Forwarded-For', () => {
    const mount = services.proxy!.volumes!.find((v) => v.endsWith(':/etc/nginx/nginx.conf:ro'))!;
    const conf = readFileSync(resolve(dirname(FILE), mount.split(':')[0]!), 'utf8');
    const upstream = /upstream\s+(\w+)\s*\{([^}]*)\}/.exec(conf)!;
    const servers = [...upstream[2]!.matchAll(/server\s+([\w-]+):(\d+);/g)].map((m) => `${m[1]}:${m[2]}`);
    expect(servers.sort()).toEqual(boards.map((n) => `${n}:${loadConfig(env(services[n]!)).port}`).sort());
    expect(conf).toContain(`proxy_pass http://${upstream[1]};`);
    expect(conf).toMatch(/proxy_http_version 1\.1;/);
    expect(conf).toMatch(/proxy_set_header Upgrade \$http_upgrade;/);
    expect(conf).toMatch(/proxy_set_header Connection \$connection_upgrade;/);
    expect(conf).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    expect(conf).toMatch(/proxy_read_timeout (\d{3,})s;/); // above the sockets' 60 s idle timeout
    expect(dependsOn(services.proxy!)).toEqual(expect.arrayContaining(boards));
  });
});
