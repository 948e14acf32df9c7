// Reads a value in the store's own record format (record-format.ts), checking every length
// against the value's end: bytes no version wrote fail as corrupt, never as a wrong value.
import { FORMAT, KNOWN_ONE_BYTE, KNOWN_STRINGS, SHAPES, T } from './record-format.js';

/** A stored value this format cannot read: the directory holds bytes no version of the store wrote. */
export class CorruptRecordError extends Error {
  constructor(detail: string, at: number, length: number) {
    super(`embedded store: a stored value is corrupt: ${detail} at byte ${at} of ${length}`);
    this.name = 'CorruptRecordError';
  }
}

/** Node's own, without toString's argument checks (lmdb-js reads strings the same way). */
type Slice = (this: Uint8Array, start: number, end: number) => string;
const { utf8Slice, hexSlice } = Buffer.prototype as unknown as { utf8Slice: Slice; hexSlice: Slice };

const NOTHING = new Uint8Array(0);
let src: Uint8Array = NOTHING;
let at = 0;
let end = 0;

const corrupt = (detail: string, where = at): never => {
  throw new CorruptRecordError(detail, where, end);
};

function byte(): number {
  if (at >= end) corrupt('the value ends early');
  return src[at++]!;
}

function readVarint(): number {
  let n = 0;
  let scale = 1;
  for (let i = 0; i < 8; i++) {
    const b = byte();
    n += (b & 0x7f) * scale;
    if (b < 0x80) return n;
    scale *= 0x80;
  }
  return corrupt('a number runs past 8 bytes');
}

function knownString(index: number): string {
  return KNOWN_STRINGS[index] ?? corrupt(`unknown string #${index}`, at - 1);
}

function readUuid(): string {
  if (at + 16 > end) corrupt('the value ends early');
  const x = hexSlice.call(src, at, (at += 16));
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

const TWO = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

function readIsoDate(): string {
  const date = readVarint();
  const time = readVarint();
  const year = Math.floor(date / 416);
  if (year > 9999 || time >= 86_400_000) corrupt('a date out of range');
  const month = Math.floor(date / 32) % 13;
  const hours = Math.floor(time / 3_600_000);
  const minutes = Math.floor(time / 60_000) % 60;
  const seconds = Math.floor(time / 1000) % 60;
  return `${TWO[Math.floor(year / 100)]}${TWO[year % 100]}-${TWO[month]}-${TWO[date % 32]}T${TWO[hours]}:${TWO[minutes]}:${TWO[seconds]}.${THREE[time % 1000]}Z`;
}

function readKnown(tag: number): string {
  if (tag >= T.knownString && tag < T.null) return knownString(tag - T.knownString);
  if (tag === T.knownStringLong) return knownString(byte() + KNOWN_ONE_BYTE);
  return corrupt(`byte ${tag} where a known string was expected`, at - 1);
}

function readValue(): unknown {
  const tag = byte();
  if (tag < 0x80) return tag;
  if (tag < T.null) return knownString(tag - T.knownString);
  switch (tag) {
    case T.null:
      return null;
    case T.false:
      return false;
    case T.true:
      return true;
    case T.undefined:
      return undefined;
    case T.float: {
      if (at + 8 > end) corrupt('the value ends early');
      const n = Buffer.prototype.readDoubleLE.call(src, at);
      at += 8;
      return n;
    }
    case T.negative:
      return -readVarint();
    case T.positive:
      return readVarint();
    case T.string: {
      const length = readVarint();
      if (at + length > end) corrupt('the value ends early');
      const s = utf8Slice.call(src, at, at + length);
      at += length;
      return s;
    }
    case T.knownStringLong:
      return knownString(byte() + KNOWN_ONE_BYTE);
    case T.uuid:
      return readUuid();
    case T.prefixedUuid:
      return readKnown(byte()) + readUuid();
    case T.isoDate:
      return readIsoDate();
    case T.array: {
      const length = readVarint();
      if (length > end - at) corrupt(`an array of ${length} elements`);
      const a: unknown[] = new Array(length);
      for (let i = 0; i < length; i++) a[i] = readValue();
      return a;
    }
    case T.map: {
      const count = readVarint();
      if (count > end - at) corrupt(`a map of ${count} keys`);
      const o: Record<string, unknown> = {};
      for (let i = 0; i < count; i++) {
        const key = readValue();
        if (typeof key !== 'string' || key === '__proto__') corrupt('a key this format never writes');
        o[key as string] = readValue();
      }
      return o;
    }
    case T.shape:
      return (readers[byte()] ?? corrupt('an unknown shape', at - 1))();
    default:
      return corrupt(`unknown byte ${tag}`, at - 1);
  }
}

/** A field of a shape that may hold the derived mark: undefined in its place in the key order until the others are read. */
function readOrDerived(): unknown {
  if (at < end && src[at] === T.derived) {
    at++;
    return DERIVED;
  }
  return readValue();
}
const DERIVED = Symbol('derived');

/**
 * One reader per shape, an object literal of its keys: V8 builds each with the shape's hidden
 * class at once, where assigning keys one by one walks its transitions per object.
 */
const readers = SHAPES.map((shape) => {
  const fields = shape.keys.map(
    (k) => `${JSON.stringify(k)}: ${shape.derived?.key === k ? 'readOrDerived()' : 'readValue()'}`,
  );
  const make = new Function('readValue', 'readOrDerived', `return () => ({ ${fields.join(', ')} })`) as (
    read: () => unknown,
    readOrDerived: () => unknown,
  ) => () => Record<string, unknown>;
  const read = make(readValue, readOrDerived);
  const { derived } = shape;
  if (!derived) return read;
  return () => {
    const o = read();
    if (o[derived.key] === DERIVED) o[derived.key] = derived.of(o);
    return o;
  };
});

/** The value in `bytes` up to `length`, which start with RECORD_TAG. */
export function readRecord(bytes: Uint8Array, length: number): unknown {
  src = bytes;
  end = length;
  at = 1;
  if (byte() !== FORMAT) corrupt(`format ${bytes[1]} (this version reads ${FORMAT})`, 1);
  const value = readValue();
  if (at !== end) corrupt(`${end - at} bytes past the value's end`);
  src = NOTHING; // holds on to no buffer of lmdb-js's
  return value;
}
