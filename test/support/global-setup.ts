// Finds the external components once per run and hands their addresses to the suites.
// A missing component is announced in one loud line; with REQUIRE_SERVICES=1 it fails the run.
import { connect } from 'node:net';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string | null;
    redisUrl: string | null;
    stripeBase: string | null;
  }
}

function reachable(host: string, port: number, ms = 700): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

let stopMemoryServer: (() => Promise<unknown>) | null = null;

async function findMongo(): Promise<string | null> {
  if (process.env.MONGODB_URI) return process.env.MONGODB_URI;
  try {
    const { MongoMemoryServer } = await import('mongodb-memory-server-core');
    const server = await Promise.race([
      MongoMemoryServer.create(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out obtaining mongod')), 20_000)),
    ]);
    stopMemoryServer = () => server.stop();
    return server.getUri();
  } catch (e) {
    return loudSkip('MongoDB', `set MONGODB_URI (mongodb-memory-server could not obtain a mongod: ${(e as Error).message.split('\n')[0]})`);
  }
}

async function findRedis(): Promise<string | null> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  if (await reachable('127.0.0.1', 6379)) return 'redis://127.0.0.1:6379';
  return loudSkip('Redis', 'set REDIS_URL or run redis-server on 127.0.0.1:6379');
}

async function findStripe(): Promise<string | null> {
  if (process.env.STRIPE_API_BASE) return process.env.STRIPE_API_BASE;
  if (await reachable('127.0.0.1', 12111)) return 'http://127.0.0.1:12111';
  return loudSkip('stripe-mock', 'set STRIPE_API_BASE or run stripe-mock on 127.0.0.1:12111');
}

const missing: string[] = [];
function loudSkip(name: string, how: string): null {
  missing.push(name);
  console.warn(`\n!!! ${name} NOT AVAILABLE: its suites are SKIPPED (${how}) !!!\n`);
  return null;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [mongoUri, redisUrl, stripeBase] = await Promise.all([findMongo(), findRedis(), findStripe()]);
  if (process.env.REQUIRE_SERVICES === '1' && missing.length) {
    throw new Error(`REQUIRE_SERVICES=1 but these components are missing: ${missing.join(', ')}`);
  }
  project.provide('mongoUri', mongoUri);
  project.provide('redisUrl', redisUrl);
  project.provide('stripeBase', stripeBase);
  return async () => {
    await stopMemoryServer?.();
  };
}
