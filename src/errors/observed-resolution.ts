// Learns, per error code, which successful operation callers made next within the correlation
// window; withheld until enough distinct workspaces contributed that it cannot identify anyone.
import type { ErrorCode } from './registry.js';

export const CORRELATION_WINDOW_HOURS = 24;
export const MINIMUM_DISTINCT_WORKSPACES = 3;
const WINDOW_MS = CORRELATION_WINDOW_HOURS * 3600_000;

export interface ObservedResolution {
  code: ErrorCode;
  source: 'next-successful-operation';
  scope: 'all-workspaces';
  correlationWindowHours: number;
  minimumDistinctWorkspaces: number;
  status: 'insufficient-aggregate' | 'observed';
  observations: number | null;
  distinctWorkspaces: number | null;
  path: string | null;
}

interface Observation {
  workspace: string;
  operation: string;
  at: number;
}

/** In-memory per node for now; the clock is injected so tests move time. */
export class ResolutionObserver {
  private readonly pending = new Map<string, { code: ErrorCode; at: number }>();
  private readonly observed = new Map<ErrorCode, Observation[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A request from `workspace` failed with `code`. */
  failed(workspace: string, code: ErrorCode): void {
    this.pending.set(workspace, { code, at: this.now() });
  }

  /** A request from `workspace` succeeded on `operation` ("METHOD /path"). */
  succeeded(workspace: string, operation: string): void {
    const failure = this.pending.get(workspace);
    if (!failure) return;
    this.pending.delete(workspace);
    const at = this.now();
    if (at - failure.at > WINDOW_MS) return;
    const list = this.observed.get(failure.code) ?? [];
    list.push({ workspace, operation, at });
    this.observed.set(failure.code, list);
  }

  resolution(code: ErrorCode): ObservedResolution {
    const since = this.now() - WINDOW_MS;
    const recent = (this.observed.get(code) ?? []).filter((o) => o.at >= since);
    if (recent.length) this.observed.set(code, recent);
    else this.observed.delete(code);
    const workspaces = new Set(recent.map((o) => o.workspace)).size;
    const base = {
      code,
      source: 'next-successful-operation',
      scope: 'all-workspaces',
      correlationWindowHours: CORRELATION_WINDOW_HOURS,
      minimumDistinctWorkspaces: MINIMUM_DISTINCT_WORKSPACES,
    } as const;
    if (workspaces < MINIMUM_DISTINCT_WORKSPACES) {
      return { ...base, status: 'insufficient-aggregate', observations: null, distinctWorkspaces: null, path: null };
    }
    return { ...base, status: 'observed', observations: recent.length, distinctWorkspaces: workspaces, path: mostCommon(recent.map((o) => o.operation)) };
  }
}

function mostCommon(values: string[]): string {
  const counts = new Map<string, number>();
  let best = values[0]!;
  for (const v of values) {
    const n = (counts.get(v) ?? 0) + 1;
    counts.set(v, n);
    if (n > counts.get(best)!) best = v;
  }
  return best;
}
