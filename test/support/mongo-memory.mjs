// Runs mongodb-memory-server in its own process: prints the URI once ready, stops on SIGTERM.
// Isolated so a failed binary download cannot leave handles open in the test runner.
import { MongoMemoryServer } from 'mongodb-memory-server-core';

try {
  const server = await MongoMemoryServer.create();
  process.stdout.write(`${server.getUri()}\n`);
  process.on('SIGTERM', () => server.stop().finally(() => process.exit(0)));
} catch (e) {
  process.stderr.write(`${String(e?.message ?? e).split('\n')[0]}\n`);
  process.exit(1);
}
