// The embedded store's own record format: every shape and any value round-trip exactly (key order
// too), what the format does not hold goes to msgpack, values earlier versions wrote as msgpack
// read as they were, and bytes no version wrote fail with an error that says so.
import fc from 'fast-check';
import { open, type RootDatabase } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CorruptRecordError, RECORD_TAG, recordCodec, type ValueEncoder } from '../../store/embedded/record-codec.js';
import { KNOWN_STRINGS, SHAPES } from '../../store/embedded/record-format.js';
import { tempDir, type TempDir } from '../support/temp.js';

let dir: TempDir;
let env: RootDatabase;
/** The store's msgpack encoder, as lmdb-js makes it for a database of plain maps. */
let msgpack: ValueEncoder;
let codec: ValueEncoder;

beforeAll(async () => {
  dir = await tempDir();
  env = open({ path: dir.path, noSubdir: false, maxDbs: 4 });
  msgpack = (env.openDB({ name: 'x', useRecords: false } as never) as unknown as { encoder: ValueEncoder }).encoder;
  codec = recordCodec(msgpack);
});
afterAll(async () => {
  await env.close();
  await dir.remove();
});

/** The keys of every object in `v`, in order: toStrictEqual does not compare order. */
const keyOrder = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(keyOrder)
    : v && typeof v === 'object'
      ? Object.entries(v).map(([k, e]) => [k, keyOrder(e)])
      : null;

const roundTrip = (v: unknown): unknown => {
  const bytes = codec.encode(v);
  expect(bytes[0]).toBe(RECORD_TAG);
  const back = codec.decode(Buffer.from(bytes));
  expect(back).toStrictEqual(v);
  expect(keyOrder(back)).toEqual(keyOrder(v));
  return back;
};

/** Leaves of every kind the format writes in its own way, and plain ones. */
const leaf = fc.oneof(
  fc.constantFrom(...KNOWN_STRINGS),
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.tuple(fc.constantFrom('agent:', 'user:', 'token:', 'bot:'), fc.uuid()).map(([p, u]) => p + u),
  fc.tuple(fc.uuid(), fc.nat()).map(([u, n]) => `${u}:${n}`),
  fc.date({ min: new Date(-1e14), max: new Date(3e14), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-02-31T00:00:00.000Z', '2026-11-29T01:10:32.936z', '1969-12-31T23:59:59.999Z'),
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.string({ unit: 'grapheme', minLength: 40, maxLength: 300 }),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constantFrom(0, -0, 127, 128, -1, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER, 1_795_914_632_936),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);
const key = fc.oneof(fc.constantFrom(...KNOWN_STRINGS), fc.string({ unit: 'grapheme' }), fc.uuid());
const value = fc.anything({ values: [leaf], key: key.filter((k) => k !== '__proto__'), maxDepth: 3 });

describe('the embedded store record format', () => {
  it('gives back any value it holds as it was, key order included', () => {
    fc.assert(
      fc.property(value, (v) => void roundTrip(v)),
      { numRuns: 500 },
    );
  });

  it('writes each shape without its keys, and reads it back whole', () => {
    SHAPES.forEach((shape, index) => {
      const record = fc.record(Object.fromEntries(shape.keys.map((k) => [k, value])), { noNullPrototype: true });
      fc.assert(
        fc.property(record, (r) => {
          const bytes = codec.encode(r);
          expect([bytes[2], bytes[3]]).toEqual([0xde, index]);
          roundTrip(r);
        }),
        { numRuns: 100 },
      );
    });
  });

  it('derives an event _id from its board and seq, and keeps one that differs', () => {
    const event = {
      _id: '0184886d-fb28-4765-aa33-82f9ca697952:10',
      boardId: '0184886d-fb28-4765-aa33-82f9ca697952',
      seq: 10,
      type: 'item.state',
      actor: 'agent:9702454c-9eeb-4f9e-8d21-608a76beb51d',
      workId: 'W-1',
      at: 1_795_914_632_936,
      data: { from: 'claimed', to: 'done' },
      version: 1,
    };
    const derived = codec.encode(event);
    roundTrip(event);
    const other = { ...event, _id: 'imported:10' };
    expect(codec.encode(other).length).toBeGreaterThan(derived.length);
    roundTrip(other);
    roundTrip({ ...event, _id: null, boardId: { not: 'a string' } });
  });

  it('writes the bytes it always wrote: its tables are append only', () => {
    // Values as format 1 writes them. A change to KNOWN_STRINGS or SHAPES other than an appended
    // element changes these bytes, and would make every data directory read other values.
    const agent = 'agent:9702454c-9eeb-4f9e-8d21-608a76beb51d';
    const board = '0184886d-fb28-4765-aa33-82f9ca697952';
    const at = '2026-11-29T01:10:32.936Z';
    const submission = { head: 'abcdef1', by: agent, at };
    const written = [
      {
        value: {
          _id: `${board}:10`,
          boardId: board,
          seq: 10,
          type: 'item.state',
          actor: agent,
          workId: 'W-1',
          at: 1_795_914_632_936,
          data: {
            from: 'claimed',
            to: 'done',
            item: { workId: 'W-1', version: 3, state: 'done', lease: null, submission, updatedAt: at },
          },
          version: 1,
        },
        hex:
          'c101de06d7d90184886dfb284765aa3382f9ca6979520a93da809702454c9eeb4f9e8d21608a76beb51dd803572d31d6e89deaa6a234' +
          'dd039f8aa08d9ede0ad803572d31038dd0de04d80761626364656631da809702454c9eeb4f9e8d21608a76beb51ddbbdbb33e8ad82' +
          '02dbbdbb33e8ad820201',
      },
      {
        value: {
          v: 2,
          item: { workId: 'spec:S-1', text: 'ü', n: -300, f: 0.5, ok: true, no: false, u: undefined, list: [1, 2] },
        },
        hex:
          'c101de0002dd08a8d808737065633a532d31df21d802c3bcd8016ed5ac02d80166d4000000000000e03fd8026f6bd2d8026e6fd1d801' +
          '75d3d8046c697374dc020102',
      },
    ];
    for (const { value, hex } of written) {
      expect(Buffer.from(codec.encode(value)).toString('hex')).toBe(hex);
      expect(codec.decode(Buffer.from(hex, 'hex'))).toStrictEqual(value);
    }
    expect(new Set(KNOWN_STRINGS).size).toBe(KNOWN_STRINGS.length);
  });

  it('hands msgpack what it does not hold, which reads back as msgpack reads it', () => {
    const outside = [
      { at: new Date(5) },
      { bytes: new Uint8Array([1, 2, 3]) },
      { title: 'half a pair: \ud800' },
      JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as unknown,
      { big: 10n },
    ];
    for (const v of outside) {
      const bytes = codec.encode(v);
      expect(bytes[0]).not.toBe(RECORD_TAG);
      expect(codec.decode(Buffer.from(bytes))).toStrictEqual(msgpack.decode(Buffer.from(msgpack.encode(v))));
    }
  });

  it('reads the msgpack earlier versions wrote', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          key.filter((k) => k !== '__proto__'),
          value,
        ),
        (v) => {
          const bytes = Buffer.from(msgpack.encode(v));
          expect(codec.decode(bytes)).toStrictEqual(msgpack.decode(bytes));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads a value only up to the end lmdb-js gives, in a buffer longer than it', () => {
    const v = { v: 3, item: { workId: 'W-1', title: 'item 0' } };
    const bytes = codec.encode(v);
    const longer = Buffer.concat([bytes, Buffer.from([0xff, 0xff, 0xff])]);
    expect(codec.decode(longer, bytes.length)).toStrictEqual(v);
  });

  it('refuses bytes no version wrote with an error that says the value is corrupt', () => {
    const entry = codec.encode({
      v: 3,
      item: { workId: 'W-1', life: { lease: null }, at: '2026-11-29T01:10:32.936Z' },
    });
    for (let cut = 2; cut < entry.length; cut++)
      expect(() => codec.decode(Buffer.from(entry.subarray(0, cut)))).toThrow(
        /^embedded store: a stored value is corrupt: (the value ends early|a map of \d+ keys) at byte \d+ of \d+$/,
      );
    const bad = (bytes: number[]) => () => codec.decode(Buffer.from([RECORD_TAG, ...bytes]));
    expect(bad([1, 0xff])).toThrow(CorruptRecordError);
    expect(bad([1, 0xff])).toThrow('unknown byte 255 at byte 2 of 3');
    expect(bad([2, 0xd0])).toThrow('format 2 (this version reads 1)');
    expect(bad([1, 0xd0, 0xd0])).toThrow('1 bytes past the value');
    expect(bad([1, 0xde, 200])).toThrow('an unknown shape');
    expect(bad([1, 0xdf, 250])).toThrow('unknown string #330');
    expect(bad([1, 0xdc, 0xff, 0xff, 0xff, 0x0f])).toThrow('an array of');
    expect(bad([1, 0xd6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])).toThrow('a number runs past 8 bytes');
    expect(bad([1, 0xdd, 1, 0x05, 0xd0])).toThrow('a key this format never writes');
  });
});
