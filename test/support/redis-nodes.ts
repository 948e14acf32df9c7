// Two nodes on one embedded store and one Redis, as several nodes run in production: each its own
// Redis bus (and, when asked, its own board homes), both ready (bus ok, and each receiving what is
// published on a board's channel once it asks for the board) before a test starts.
import { RedisBus } from '../../src/bus/redis.js';
import { RedisHomes } from '../../src/cluster/redis-homes.js';
import { openEmbeddedStore } from '../../store/embedded/index.js';
import type { Store } from '../../store/ports/store.js';
import { Client, startTestServer, type TestServer } from './server.js';
import { tempDir, unique } from './temp.js';
import { until } from './until.js';
import { busHearsOthers } from './bus-ready.js';

export interface RedisNodes {
  a: TestServer;
  b: TestServer;
  /** The one store both nodes read and write. */
  store: Store;
  /** NODE_ID of a and of b, unique to this pair (other suites' nodes may share the Redis). */
  nodeIds: [string, string];
  /** The buses of a and of b, to hear what crosses Redis. */
  buses: [RedisBus, RedisBus];
  /** Stops both nodes, closes the store and removes its directory (a store given to it stays open). */
  stop(): Promise<void>;
}

/**
 * Starts the pair. `env` is both nodes' environment (NODE_ID is set per node); `homes` gives each
 * node board homes in Redis, so a board command on one node may be forwarded to the other; `store`
 * is one both share (another suite's, say), else a fresh embedded one.
 */
export async function twoNodesOnRedis(
  redisUrl: string,
  options: { env?: Record<string, string>; homes?: boolean; store?: Store } = {},
): Promise<RedisNodes> {
  const dir = options.store ? null : await tempDir();
  const store = options.store ?? (await openEmbeddedStore(dir!.path));
  const nodeIds: [string, string] = [unique('node-a'), unique('node-b')];
  const started: TestServer[] = [];
  const buses: RedisBus[] = [];
  const stop = async () => {
    for (const node of started) await node.stop();
    if (!dir) return;
    await store.close();
    await dir.remove();
  };
  try {
    for (const nodeId of nodeIds) {
      const bus = new RedisBus(redisUrl);
      buses.push(bus);
      started.push(
        await startTestServer(
          { ...options.env, NODE_ID: nodeId },
          store,
          bus,
          options.homes ? new RedisHomes(redisUrl) : undefined,
        ),
      );
    }
    for (const node of started) await until(async () => (await new Client(node.url).get('/readyz')).body.bus === 'ok');
    await Promise.all(buses.map((bus) => busHearsOthers(bus, redisUrl))); // so a commit on one reaches the other when it asks
  } catch (e) {
    await stop();
    throw e;
  }
  const [a, b] = started as [TestServer, TestServer];
  return { a, b, store, nodeIds, buses: buses as [RedisBus, RedisBus], stop };
}
