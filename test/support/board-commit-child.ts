// A committer that dies, or whose write fails, at one step of a board commit on MongoDB: run as
// its own process by test/store/boards-atomicity.mongo.test.ts.
//   argv: uri db prefix boardId expectedVersion step mode
//   step: header            the header update (the commit point) itself
//         after-header      the first insert of item versions, once the header landed
//         after-some-items  the second insert of item versions, once the first landed
//         after-items       once every item version landed, before the next commit replaces the intent (kill only)
//   mode: kill (SIGKILL) | fail (the write throws)
// The commit's writes come on stdin as JSON ({ set, put, removed }).
import { Collection, type Document } from 'mongodb';
import { openMongoStore } from '../../store/mongo/index.js';

const [uri, db, prefix, boardId, expected, step, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  'header' | 'after-header' | 'after-some-items' | 'after-items',
  'kill' | 'fail',
];

const input = JSON.parse(
  await new Promise<string>((resolve) => {
    let text = '';
    process.stdin.on('data', (d: Buffer) => (text += d.toString()));
    process.stdin.on('end', () => resolve(text));
  }),
) as { set: Document; put: { workId: string }[]; removed: string[] };

function strike(): never {
  if (mode === 'kill') process.kill(process.pid, 'SIGKILL');
  throw new Error(`injected failure at ${step}`);
}

// The step is reached when the driver is asked for the write it names; the write before it landed.
const insertMany = Collection.prototype.insertMany;
const updateOne = Collection.prototype.updateOne;
let inserts = 0;
let headerUpdates = 0;
/** Armed once the board is loaded, as an actor loads it before its first commit (finishing what the commit before left). */
let armed = false;
Collection.prototype.insertMany = function (this: Collection, ...args: Parameters<typeof insertMany>) {
  if (armed && this.collectionName === `${prefix}boardItems`) {
    inserts++;
    if ((step === 'after-header' && inserts === 1) || (step === 'after-some-items' && inserts === 2)) strike();
  }
  return insertMany.apply(this, args) as ReturnType<typeof insertMany>;
} as typeof insertMany;
Collection.prototype.updateOne = function (this: Collection, ...args: Parameters<typeof updateOne>) {
  if (armed && this.collectionName === `${prefix}boards`) {
    headerUpdates++;
    if (step === 'header' && headerUpdates === 1) strike();
  }
  return updateOne.apply(this, args) as ReturnType<typeof updateOne>;
} as typeof updateOne;

const store = await openMongoStore({ uri, db, prefix });
const boards = store.boards as typeof store.boards & { settled(): Promise<void> };
try {
  await boards.load(boardId);
  armed = true;
  const landed = await boards.commit(boardId, Number(expected), input.set, { put: input.put, removed: input.removed });
  await boards.settled();
  if (step === 'after-items') strike();
  process.stdout.write(JSON.stringify({ landed }));
} catch (e) {
  process.stdout.write(JSON.stringify({ error: (e as Error).message }));
}
// What this process left unfinished stays so: the test reloads from another store.
process.exit(0);
