// A request's body as its route takes it: JSON only, UTF-8 only, read exactly as sent (never
// repaired), no deeper than JSON_DEPTH_MAX, and checked by the route's schema.
import { AppError } from '../errors/app-error.js';
import type { Route } from './route.js';
import { parseWith } from './validation.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*("?[^;\s]*"?)/i;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
/** A code point that is half of a surrogate pair on its own (a `\ud800` escape with no partner). */
const LONE_SURROGATE = /\p{Cs}/u;
/**
 * The most levels of objects and arrays a body may nest. JSON.parse takes any depth, but much of
 * what reads a value after it recurses (JSON.stringify, structuredClone, the MCP SDK's schemas, the
 * store's encoder): past some thousands of levels each overflows its stack. No body of ours comes
 * near this (an import's event data, the deepest, is at most IMPORT_DATA_DEPTH_MAX = 32 levels
 * inside 4 of its own).
 */
export const JSON_DEPTH_MAX = 64;

/**
 * A JSON body exactly as sent: invalid UTF-8 or a lone surrogate escape is refused, never
 * replaced by U+FFFD (two different invalid inputs must not become the same value); so is one
 * nested deeper than JSON_DEPTH_MAX.
 */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new AppError('INVALID_JSON', 'The body is empty; send a JSON document.');
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new AppError('INVALID_JSON', 'The body is not valid UTF-8.');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('INVALID_JSON', 'The body is not well-formed JSON.');
  }
  // Only a \u escape can make a lone surrogate out of valid UTF-8.
  const problem = problemOf(value, text.includes('\\u'));
  if (problem) throw new AppError('INVALID_JSON', problem);
  return value;
}

const TOO_DEEP = `The body is nested deeper than ${JSON_DEPTH_MAX} levels of objects and arrays.`;
const LONE = 'The body holds a lone surrogate (\\uD800-\\uDFFF without its pair).';

/**
 * Why a parsed body is refused (too deep; a lone surrogate in a key or a string, looked for only
 * when `surrogates`), or null. A walk with a stack of its own, not recursion: any depth JSON.parse
 * took is safe to look at.
 */
function problemOf(root: unknown, surrogates: boolean): string | null {
  if (typeof root !== 'object' || root === null)
    return surrogates && typeof root === 'string' && LONE_SURROGATE.test(root) ? LONE : null;
  // Each container with its depth; a closure per value, or entries made per object, cost a request more than the walk itself.
  const open: object[] = [root];
  const depths: number[] = [1];
  for (let value = open.pop(); value !== undefined; value = open.pop()) {
    const depth = depths.pop()!;
    if (depth > JSON_DEPTH_MAX) return TOO_DEEP;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (typeof child === 'object' && child !== null) {
          open.push(child);
          depths.push(depth + 1);
        } else if (surrogates && typeof child === 'string' && LONE_SURROGATE.test(child)) return LONE;
      }
      continue;
    }
    for (const key in value) {
      if (surrogates && LONE_SURROGATE.test(key)) return LONE;
      const child = (value as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        open.push(child);
        depths.push(depth + 1);
      } else if (surrogates && typeof child === 'string' && LONE_SURROGATE.test(child)) return LONE;
    }
  }
  return null;
}

/**
 * The body of a request to `route`: undefined for a route that takes none (or a raw one, read by
 * its handler), else parsed and checked by the route's schema. A JSON body must say so
 * (415 JSON_REQUIRED) and be UTF-8 (400 INVALID_JSON).
 */
export function bodyOf(route: Route, raw: { headers: Record<string, string>; body: Buffer }): unknown {
  if (route.bodyKind === 'none' || route.bodyKind === 'raw') return undefined;
  const empty = raw.body.length === 0;
  if (route.bodyKind === 'optional-json' && empty)
    return route.body ? parseWith(route.body, undefined, 'body') : undefined;
  const contentType = raw.headers['content-type'] ?? '';
  if (!JSON_TYPE.test(contentType)) throw new AppError('JSON_REQUIRED');
  const charset = CHARSET.exec(contentType)?.[1];
  if (charset !== undefined && !/^"?utf-8"?$/i.test(charset))
    throw new AppError('INVALID_JSON', `The body must be UTF-8 JSON; charset=${charset.slice(0, 40)} is not accepted.`);
  return route.body ? parseWith(route.body, parseJson(raw.body), 'body') : parseJson(raw.body);
}
