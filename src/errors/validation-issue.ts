// The one wording of a schema failure (REST bodies and queries, WebSocket messages): the field at
// fault, then what is wrong with it.
import type { z } from 'zod';

/** "root.path: message", or the unknown properties named in full. */
export function describeIssue(issue: z.core.$ZodIssue, root: string): string {
  const path = [root, ...issue.path.map(String)].join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `${path}.${k}`).join(', ');
    return `unknown propert${issue.keys.length > 1 ? 'ies' : 'y'}: ${keys}`;
  }
  return `${path}: ${issue.message}`;
}
