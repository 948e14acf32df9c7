// The order a whole run starts its files in: the longest first, by the seconds each took in a
// recorded run (file-durations.json), so that the two workers, taking the next file as each comes
// free, end together rather than one starting a three-minute file as the other runs out of work.
// Vitest's own order needs its cache of the last run, which a fresh clone (CI) has not; without it
// the largest files by size go first, and here some of the longest are a few lines that run a
// shared flow. A file the record does not know goes first, as Vitest does with one it never ran.
// To record again: `npx vitest run --reporter=json --outputFile=/tmp/r.json`, then
//   node -e 'const r=require("/tmp/r.json"),o={};for(const f of r.testResults)o[require("path").relative(process.cwd(),f.name)]=Math.round(f.endTime-f.startTime)/1000;console.log(JSON.stringify(Object.fromEntries(Object.entries(o).sort()),null,2))' > test/support/file-durations.json
import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const RECORDED = JSON.parse(readFileSync(new URL('./file-durations.json', import.meta.url), 'utf8')) as Record<
  string,
  number
>;

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const key = (spec: TestSpecification) => {
      const seconds = RECORDED[relative(root, spec.moduleId).split('\\').join('/')];
      // Unknown files first, the larger first; then the recorded ones, the longest first.
      return seconds === undefined ? [0, -size(spec.moduleId)] : [1, -seconds];
    };
    const keys = new Map(files.map((f) => [f, key(f)]));
    return [...files].sort((a, b) => {
      const [ka, kb] = [keys.get(a)!, keys.get(b)!];
      return ka[0]! - kb[0]! || ka[1]! - kb[1]!;
    });
  }
}

function size(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
