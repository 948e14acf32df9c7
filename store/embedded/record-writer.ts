// Writes a value in the store's own record format (record-format.ts) into one buffer it reuses.
import { FORMAT, KNOWN_ONE_BYTE, KNOWN_STRINGS, RECORD_TAG, SHAPES, T, type Shape } from './record-format.js';

const knownIndex = new Map(KNOWN_STRINGS.map((s, i) => [s, i]));
/** Shapes by their first key: a candidate is confirmed by its length and every key. */
const shapesByFirstKey = new Map<string, { shape: Shape; index: number }[]>();
SHAPES.forEach((shape, index) => {
  const list = shapesByFirstKey.get(shape.keys[0]!) ?? [];
  list.push({ shape, index });
  shapesByFirstKey.set(shape.keys[0]!, list);
});
/** Thrown inside writeRecord for a value this format does not hold: the caller hands it to msgpack. */
class Unsupported extends Error {}

let out = Buffer.allocUnsafeSlow(8192);
let pos = 0;

function room(bytes: number): void {
  if (pos + bytes <= out.length) return;
  const bigger = Buffer.allocUnsafeSlow(Math.max(out.length * 2, pos + bytes));
  out.copy(bigger, 0, 0, pos);
  out = bigger;
}

function varint(n: number): void {
  room(8);
  while (n >= 0x80) {
    out[pos++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[pos++] = n;
}

/** Each character's value as a lowercase hex digit, or -1 (an uppercase id would not read back as it was). */
const HEX_DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) HEX_DIGIT['0123456789abcdef'.charCodeAt(i)] = i;
const hexDigit = (c: number): number => (c < 128 ? HEX_DIGIT[c]! : -1);

/** Writes the 16 bytes of a lowercase uuid at `from` in `s`, or returns false (nothing written) when it is not one. */
function uuidAt(s: string, from: number): boolean {
  if (s.charCodeAt(from + 8) !== 45 || s.charCodeAt(from + 13) !== 45) return false;
  if (s.charCodeAt(from + 18) !== 45 || s.charCodeAt(from + 23) !== 45) return false;
  room(16);
  let at = pos;
  for (let i = from; i < from + 36; i += 2) {
    if (i === from + 8 || i === from + 13 || i === from + 18 || i === from + 23) i++;
    const hi = hexDigit(s.charCodeAt(i));
    const lo = hexDigit(s.charCodeAt(i + 1));
    if ((hi | lo) < 0) return false;
    out[at++] = (hi << 4) | lo;
  }
  pos = at;
  return true;
}

function known(index: number): void {
  room(2);
  if (index < KNOWN_ONE_BYTE) out[pos++] = T.knownString + index;
  else {
    out[pos++] = T.knownStringLong;
    out[pos++] = index - KNOWN_ONE_BYTE;
  }
}

/** The number the `count` digits from `from` in `s` spell, or -1. */
function digits(s: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * Writes a time as toISOString spells it (YYYY-MM-DDTHH:MM:SS.mmmZ) as its day and its time of
 * day, or returns false. Its digits, not the instant: any such string reads back as it was, and
 * neither way goes through Date (some microseconds each on a busy node).
 */
function isoDate(s: string): boolean {
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84) return false;
  if (s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 46 || s.charCodeAt(23) !== 90)
    return false;
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 2);
  const day = digits(s, 8, 2);
  const hour = digits(s, 11, 2);
  const minute = digits(s, 14, 2);
  const second = digits(s, 17, 2);
  const milli = digits(s, 20, 3);
  if (year < 0 || month < 0 || month > 12 || day < 0 || day > 31) return false;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || milli < 0) return false;
  room(1);
  out[pos++] = T.isoDate;
  varint((year * 13 + month) * 32 + day);
  varint(((hour * 60 + minute) * 60 + second) * 1000 + milli);
  return true;
}

function writeString(s: string): void {
  const index = knownIndex.get(s);
  if (index !== undefined) return known(index);
  const length = s.length;
  if (length === 36) {
    const start = pos;
    room(17);
    out[pos++] = T.uuid;
    if (uuidAt(s, 0)) return;
    pos = start;
  } else if (length > 36 && s.charCodeAt(length - 37) === 58) {
    const prefix = knownIndex.get(s.slice(0, length - 36));
    if (prefix !== undefined) {
      const start = pos;
      room(1);
      out[pos++] = T.prefixedUuid;
      known(prefix);
      if (uuidAt(s, length - 36)) return;
      pos = start;
    }
  } else if (length === 24 && isoDate(s)) return;
  // A lone surrogate would come back as U+FFFD: such a value is left to msgpack, as before.
  if (!(s as unknown as { isWellFormed(): boolean }).isWellFormed()) throw new Unsupported();
  room(1 + 8 + length * 3);
  out[pos++] = T.string;
  if (length < 0x80 / 3) {
    // One byte of length holds any encoding of it: written after the text, ASCII by hand.
    const start = pos++;
    let i = 0;
    for (let c; i < length && (c = s.charCodeAt(i)) < 0x80; i++) out[pos++] = c;
    if (i < length) pos = start + 1 + out.write(s, start + 1);
    out[start] = pos - start - 1;
  } else {
    varint(Buffer.byteLength(s));
    pos += out.write(s, pos);
  }
}

function writeNumber(n: number): void {
  room(9);
  if (Number.isSafeInteger(n) && !(n === 0 && 1 / n < 0)) {
    if (n >= 0 && n < 0x80) out[pos++] = n;
    else {
      out[pos++] = n >= 0 ? T.positive : T.negative;
      varint(Math.abs(n));
    }
  } else {
    out[pos++] = T.float;
    pos = out.writeDoubleLE(n, pos);
  }
}

function shapeOf(keys: string[]): number {
  const candidates = keys.length ? shapesByFirstKey.get(keys[0]!) : undefined;
  if (!candidates) return -1;
  next: for (const { shape, index } of candidates) {
    if (shape.keys.length !== keys.length) continue;
    for (let i = 1; i < keys.length; i++) if (shape.keys[i] !== keys[i]) continue next;
    return index;
  }
  return -1;
}

function writeObject(o: Record<string, unknown>): void {
  const proto = Object.getPrototypeOf(o) as unknown;
  if (proto !== Object.prototype && proto !== null) throw new Unsupported();
  const keys = Object.keys(o);
  const index = shapeOf(keys);
  room(2);
  if (index >= 0) {
    out[pos++] = T.shape;
    out[pos++] = index;
    return writers[index]!(o);
  }
  out[pos++] = T.map;
  varint(keys.length);
  for (const key of keys) {
    // msgpack's reader renames it rather than set the prototype: left to msgpack.
    if (key === '__proto__') throw new Unsupported();
    writeString(key);
    writeValue(o[key]);
  }
}

function writeDerived(o: Record<string, unknown>, shape: Shape): void {
  const { key, of } = shape.derived!;
  if (o[key] !== of(o)) return writeValue(o[key]);
  room(1);
  out[pos++] = T.derived;
}

/**
 * One writer per shape, reading its fields by name: where a loop over the keys makes every read a
 * lookup of a key only known at run time, each of these reads sees one or few object layouts.
 */
const writers = SHAPES.map((shape, index) => {
  const fields = shape.keys.map((k) =>
    shape.derived?.key === k ? `writeDerived(o, shapes[${index}]);` : `writeValue(o[${JSON.stringify(k)}]);`,
  );
  const make = new Function('writeValue', 'writeDerived', 'shapes', `return (o) => { ${fields.join(' ')} }`) as (
    ...args: unknown[]
  ) => (o: Record<string, unknown>) => void;
  return make(writeValue, writeDerived, SHAPES);
});

function writeValue(v: unknown): void {
  switch (typeof v) {
    case 'string':
      return writeString(v);
    case 'number':
      return writeNumber(v);
    case 'boolean':
      room(1);
      out[pos++] = v ? T.true : T.false;
      return;
    case 'undefined':
      room(1);
      out[pos++] = T.undefined;
      return;
    case 'object':
      if (v === null) {
        room(1);
        out[pos++] = T.null;
        return;
      }
      if (Array.isArray(v)) {
        room(1);
        out[pos++] = T.array;
        varint(v.length);
        for (const e of v) writeValue(e);
        return;
      }
      return writeObject(v as Record<string, unknown>);
    default:
      throw new Unsupported();
  }
}

/** The value in the record format (a copy of its own), or null when it holds what the format does not (a Date, binary, a lone surrogate). */
export function writeRecord(value: unknown): Uint8Array | null {
  pos = 0;
  room(2);
  out[pos++] = RECORD_TAG;
  out[pos++] = FORMAT;
  try {
    writeValue(value);
  } catch (e) {
    if (e instanceof Unsupported) return null;
    throw e;
  }
  // A copy: lmdb-js may queue the bytes past the call (a write outside a transaction).
  const bytes = Buffer.allocUnsafe(pos);
  out.copy(bytes, 0, 0, pos);
  return bytes;
}
