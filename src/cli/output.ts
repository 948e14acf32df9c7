// Human output by default, JSON with --json: each command hands over the board's answer and a
// function that says it in lines for a person. Colour only on a terminal (NO_COLOR turns it off,
// FORCE_COLOR on). Errors go to stderr with the registry's code, meaning and fix.
import { meaningBeyond, refusalOf } from '../mcp/results.js';
import { UsageError, AuthError } from './exit-codes.js';

const CODES = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90 } as const;
export type Style = keyof typeof CODES;

export function colourOn(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY) && env.NO_COLOR === undefined;
}

export class Output {
  readonly colour: boolean;

  constructor(
    readonly json: boolean,
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
    private readonly err: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  ) {
    this.colour = !json && colourOn(out);
  }

  paint(style: Style, text: string): string {
    return this.colour ? `\u001b[${CODES[style]}m${text}\u001b[0m` : text;
  }

  /** The answer: as JSON, or as the lines `human` makes of it. */
  result<T>(value: T, human: (value: T) => string | string[]): void {
    if (this.json) return void this.out.write(`${JSON.stringify(value)}\n`);
    const lines = human(value);
    this.out.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`);
  }

  /** One line of a stream (watch): a JSON object per line with --json. */
  line(value: unknown, human: string): void {
    this.out.write(this.json ? `${JSON.stringify(value)}\n` : `${human}\n`);
  }

  /** A message for the person, never part of the result (stderr). */
  note(text: string): void {
    this.err.write(`${text}\n`);
  }

  failure(error: unknown): void {
    if (error instanceof UsageError || error instanceof AuthError) {
      return void this.err.write(
        this.json
          ? `${JSON.stringify({ error: { code: error instanceof AuthError ? 'NO_CREDENTIAL' : 'USAGE', message: error.message } })}\n`
          : `error: ${error.message}\n`,
      );
    }
    const r = refusalOf(error);
    if (this.json) return void this.err.write(`${JSON.stringify({ error: r })}\n`);
    const meaning = meaningBeyond(r);
    const lines = [
      `${this.paint('red', 'error')}: ${r.code} (${r.status}): ${r.message}`,
      ...(meaning ? [`  meaning: ${meaning}`] : []),
      `  fix: ${r.fix}`,
    ];
    if (r.details) lines.push(`  details: ${JSON.stringify(r.details)}`);
    if (r.retryAfter !== null) lines.push(`  retry after: ${r.retryAfter} s`);
    if (r.requestId) lines.push(this.paint('gray', `  request id: ${r.requestId}`));
    this.err.write(`${lines.join('\n')}\n`);
  }
}

/** Seconds from now to an ISO time, as "in 14m 3s" (or "ago"). */
export function until(iso: string, now = Date.now()): string {
  const s = Math.round((Date.parse(iso) - now) / 1000);
  const abs = Math.abs(s);
  const text =
    abs >= 3600
      ? `${Math.floor(abs / 3600)}h ${Math.floor((abs % 3600) / 60)}m`
      : abs >= 60
        ? `${Math.floor(abs / 60)}m ${abs % 60}s`
        : `${abs}s`;
  return s >= 0 ? `in ${text}` : `${text} ago`;
}
