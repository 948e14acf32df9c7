// Each MongoDB-wire server's way of saying a unique index refused a write, as the adapter reads it
// (store/mongo/duplicate-key.ts). The messages are those the servers answered.
import { MongoBulkWriteError, MongoServerError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { duplicateWrites, indexNamedIn, isDuplicateKey } from '../../store/mongo/duplicate-key.js';

const INDEXES = ['email', 'boardId_seq', 'customerId'];
const refusal = (code: number, errmsg: string) => new MongoServerError({ ok: 0, code, errmsg });

describe('duplicate keys as each wire server reports them', () => {
  it.each([
    [
      'MongoDB',
      11000,
      'E11000 duplicate key error collection: db.accounts index: email dup key: { email: "a" }',
      'email',
    ],
    ['MongoDB, the primary key', 11000, 'E11000 duplicate key error collection: db.accounts index: _id_ dup key', null],
    ['FerretDB 2', 11000, "Duplicate key violation on the requested collection: Index 'boardId_seq'", 'boardId_seq'],
    ['FerretDB 2, the primary key', 11000, "Duplicate key violation on the requested collection: Index '_id_'", '_id'],
    [
      'FerretDB 2 on findAndModify',
      1,
      'conflicting key value violates exclusion constraint "documents_rum_index_1685"',
      null,
    ],
    ['FerretDB 1.x, an insert', 11000, 'E11000 duplicate key error collection: board_test.accounts', null],
    [
      'FerretDB 1.x on findAndModify',
      1,
      "[msg_findandmodify.go:196 …] constraint failed: UNIQUE constraint failed: index 'accounts_f00c3c10_email' (2067)",
      'email',
    ],
  ])('%s: a duplicate key, on the index its message names', (_, code, message, index) => {
    expect(isDuplicateKey(refusal(code, message))).toBe(true);
    expect(indexNamedIn(message, INDEXES)).toBe(index);
  });

  it('takes no other failure for a duplicate key', () => {
    expect(isDuplicateKey(refusal(1, 'could not serialize access due to concurrent update'))).toBe(false);
    expect(isDuplicateKey(refusal(2, 'conflicting key value violates exclusion constraint "x"'))).toBe(false);
    expect(isDuplicateKey(new Error('E11000 duplicate key'))).toBe(false);
    expect(indexNamedIn("Index 'emails'", INDEXES)).toBeNull();
  });

  it('reads a bulk write as duplicates only when every write failed on one', () => {
    const bulk = (writeErrors: { index: number; code: number; errmsg: string }[]) =>
      new MongoBulkWriteError(
        {
          message: 'bulk',
          code: writeErrors[0]!.code,
          writeErrors: writeErrors as never,
        },
        {
          insertedCount: 0,
          matchedCount: 0,
          modifiedCount: 0,
          deletedCount: 0,
          upsertedCount: 0,
          upsertedIds: {},
          insertedIds: {},
        } as never,
      );
    const dup = { index: 3, code: 11000, errmsg: "Duplicate key violation on the requested collection: Index '_id_'" };
    expect(duplicateWrites(bulk([dup]))?.map((w) => w.index)).toEqual([3]);
    expect(duplicateWrites(bulk([dup, { index: 4, code: 2, errmsg: 'bad value' }]))).toBeNull();
    expect(duplicateWrites(refusal(11000, 'E11000 duplicate key'))).toBeNull();
  });
});
