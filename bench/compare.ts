// The old name of npm run bench's first part: bench/engine.ts (issue 28's table, three
// interleaved rounds on an idle machine) is that part now; this runs it with the same arguments.
import { main } from './engine.js';

process.exit(await main(process.argv.slice(2)));
