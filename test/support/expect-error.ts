// Asserts the error envelope of a response: status, code, and the fields every error carries.
import { expect } from 'vitest';
import type { Res } from './server.js';

export function expectError(res: Res, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }, res.text.slice(0, 300)).toEqual({ status, code });
  expect(res.body.error).toMatchObject({ status, example: null });
  for (const field of ['message', 'meaning', 'fix', 'requestId']) expect(typeof res.body.error[field]).toBe('string');
  expect(res.body.error.observedResolution).toMatchObject({
    code,
    correlationWindowHours: 24,
    minimumDistinctWorkspaces: 3,
  });
  expect(res.headers.get('x-request-id')).toBe(res.body.error.requestId);
}
