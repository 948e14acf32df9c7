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
