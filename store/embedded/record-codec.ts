// The embedded store's own value format for what a board commit writes (its header, its entries,
// its events): each object of a known shape as its values in order, known strings, ids and ISO
// dates as a byte or a few (record-format.ts). A value is then smaller than msgpack compressed with
// LZ4 on the store's dictionary, for a fraction of the CPU (issue 46). It starts with a byte no
// msgpack document does, so the values earlier versions wrote (plain msgpack maps, or records)
// read as they are, through the msgpack encoder the store hands in.
import { RECORD_TAG } from './record-format.js';
import { readRecord } from './record-reader.js';
import { writeRecord } from './record-writer.js';

export { RECORD_TAG } from './record-format.js';
export { CorruptRecordError } from './record-reader.js';

/** What lmdb-js asks of a value encoder; `decode`'s second argument is the value's end, or options. */
export interface ValueEncoder {
  encode(value: unknown): Uint8Array;
  decode(bytes: Uint8Array, end?: unknown): unknown;
}

/**
 * The encoder for the databases that hold board headers, entries and events. `msgpack` is the
 * store's msgpack encoder: it reads values earlier versions wrote, and writes a value holding what
 * this format does not (which these records never do; it reads back all the same).
 */
export function recordCodec(msgpack: ValueEncoder): ValueEncoder {
  return {
    encode: (value) => writeRecord(value) ?? msgpack.encode(value),
    decode: (bytes, end) =>
      bytes[0] === RECORD_TAG
        ? readRecord(bytes, typeof end === 'number' ? end : bytes.length)
        : msgpack.decode(bytes, end),
  };
}
