// The one wire shape of an error, shared by REST and WebSocket.
import { ERRORS, type ErrorCode } from './registry.js';
import type { ObservedResolution } from './observed-resolution.js';

export interface ErrorLinks {
  contract: string;
  changelog: string;
  blog: string;
}

export function errorLinks(publicUrl: string, code: ErrorCode): ErrorLinks {
  return {
    contract: `${publicUrl}/docs/openapi.json`,
    changelog: `${publicUrl}/changelog`,
    blog: `${publicUrl}/dispatches#${code.toLowerCase()}`,
  };
}

export interface ErrorRecord {
  code: ErrorCode;
  status: number;
  meaning: string;
  fix: string;
  example: null;
  links: ErrorLinks;
  observedResolution: ObservedResolution;
}

export function errorRecord(code: ErrorCode, publicUrl: string, resolution: ObservedResolution): ErrorRecord {
  const spec = ERRORS[code];
  return {
    code,
    status: spec.status,
    meaning: spec.meaning,
    fix: spec.fix,
    example: null,
    links: errorLinks(publicUrl, code),
    observedResolution: resolution,
  };
}

export interface ErrorEnvelope {
  error: ErrorRecord & { message: string; requestId: string; details?: Record<string, unknown> };
}

export function errorEnvelope(
  record: ErrorRecord,
  message: string,
  requestId: string,
  details?: Record<string, unknown>,
): ErrorEnvelope {
  return { error: { ...record, message, requestId, ...(details ? { details } : {}) } };
}

/**
 * Error envelopes written as JSON: each one exactly as `JSON.stringify(errorEnvelope(errorRecord(
 * code, publicUrl, resolution), message, requestId, details))` writes it, but the record (all of it
 * but the message, the request id and the details) serialised once per code and kept while the
 * observer gives the same resolution. Under a flood of refusals the envelope was built and
 * serialised whole for each, its half a kilobyte of meaning, fix and links every time.
 */
export class ErrorEnvelopes {
  /** Per code: the resolution the record was written with, and the envelope's JSON up to the end of the record. */
  private readonly heads = new Map<ErrorCode, { resolution: ObservedResolution; head: string; meaning: string }>();

  constructor(private readonly publicUrl: string) {}

  json(
    code: ErrorCode,
    resolution: ObservedResolution,
    message: string,
    requestId: string,
    details?: Record<string, unknown>,
  ): string {
    const [before, after] = this.around(code, resolution, message, details);
    return `${before}${JSON.stringify(requestId)}${after}`;
  }

  /** The envelope's JSON before its request id's and after it: `json()` writes the id's JSON between them. */
  around(
    code: ErrorCode,
    resolution: ObservedResolution,
    message: string,
    details?: Record<string, unknown>,
  ): [before: string, after: string] {
    let kept = this.heads.get(code);
    if (kept?.resolution !== resolution) {
      // `{"error":{…record…}}` without its two closing braces: the rest follows the record's last property.
      const whole = JSON.stringify({ error: errorRecord(code, this.publicUrl, resolution) });
      kept = { resolution, head: whole.slice(0, -2), meaning: JSON.stringify(ERRORS[code].meaning) };
      this.heads.set(code, kept);
    }
    const said = message === ERRORS[code].meaning ? kept.meaning : JSON.stringify(message);
    return [`${kept.head},"message":${said},"requestId":`, details ? `,"details":${JSON.stringify(details)}}}` : '}}'];
  }
}
