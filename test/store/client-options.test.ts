// What the MongoDB store asks of a deployment: majority, journaled writes and retryable writes
// unless MONGODB_URI says otherwise, the URI's own options winning, as the driver resolves them.
import { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { clientOptions, optionsInUri } from '../../store/mongo/client-options.js';

/** The options the driver settles on for `uri` with the store's defaults (no connection made). */
const resolved = (uri: string) => new MongoClient(uri, clientOptions(uri)).options;

describe('the MongoDB client options', () => {
  it('asks for writes on a majority, journaled, and retryable, when the URI says nothing', () => {
    const o = resolved('mongodb://db1:27017,db2:27017/?replicaSet=rs0');
    expect(o.writeConcern).toMatchObject({ w: 'majority', journal: true });
    expect(o.retryWrites).toBe(true);
    expect(o.readPreference.mode).toBe('primary');
  });

  it("keeps the URI's write concern, retryWrites and read preference", () => {
    const o = resolved('mongodb://db1:27017/?w=1&journal=false&retryWrites=false&readPreference=secondaryPreferred');
    expect(o.writeConcern).toMatchObject({ w: 1, journal: false });
    expect(o.retryWrites).toBe(false);
    expect(o.readPreference.mode).toBe('secondaryPreferred');
    expect(resolved('mongodb+srv://u:p@cluster0.example.net/board?w=2').writeConcern).toMatchObject({ w: 2 });
  });

  it('reads the option names of any connection string, case aside', () => {
    expect([...optionsInUri('mongodb://a:1,b:2/db?RetryWrites=false&W=majority')]).toEqual(['retrywrites', 'w']);
    expect(optionsInUri('mongodb://localhost:27017/').size).toBe(0);
  });
});
