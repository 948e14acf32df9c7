// The registry's codes the suites are actually answered with, over HTTP (Client) and on sockets
// (openSocket): each worker appends the codes it sees, once each, to a file of its own in the
// run's directory (global-setup.ts), which checks at the end of a whole run that every registered
// code was answered at least once (ANSWERED_ELSEWHERE names the few no suite's client can see).
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';

const seen = new Set<string>();
let file: string | null | undefined;

/** Notes a code an error answer carried (no-op outside a run that collects them). */
export function answered(code: unknown): void {
  if (typeof code !== 'string' || seen.has(code)) return;
  seen.add(code);
  if (file === undefined) {
    const dir = inject('answeredCodesDir');
    file = dir ? join(dir, `${process.pid}.txt`) : null;
  }
  if (file) appendFileSync(file, `${code}\n`);
}

/** An error envelope's code, if `body` is one. */
export const codeOf = (body: unknown): unknown => (body as { error?: { code?: unknown } } | undefined)?.error?.code;
