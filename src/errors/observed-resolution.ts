// Learns, per error code, which successful operation callers made next within the correlation
// window; withheld until enough distinct workspaces contributed that it cannot identify anyone.
import type { ErrorCode } from './registry.js';

export const CORRELATION_WINDOW_HOURS = 24;
export const MINIMUM_DISTINCT_WORKSPACES = 3;
const WINDOW_MS = CORRELATION_WINDOW_HOURS * 3600_000;
/** How long a workspace's repeated failure with one code goes untold to the other nodes (see failed). */
export const FAILED_RETOLD_MS = 1000;

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

/** What one node tells every node (itself included), so a failure on one node and the success after it on another still correlate. */
export type ResolutionNote =
  | { kind: 'resolution.failed'; workspace: string; code: ErrorCode; at: number }
  | { kind: 'resolution.observed'; workspace: string; code: ErrorCode; operation: string; at: number };

/** Kept in memory on each node; with several nodes `share` carries every note to all of them. The clock is injected so tests move time. */
export class ResolutionObserver {
  /** Each workspace's last failure (`told`: when a note said so), until a success follows it. */
  private readonly pending = new Map<string, { code: ErrorCode; at: number; told: number }>();
  private readonly observed = new Map<ErrorCode, Observation[]>();
  /**
   * Each code's resolution as last worked out, until an observation of the code is heard or the
   * oldest it counted leaves the window: every error response carries one, and working it out
   * walks the code's observations of the last 24 h (under a flood of refusals, once per refusal).
   */
  private readonly resolved = new Map<ErrorCode, { value: ObservedResolution; until: number }>();

  /** The notes it hears from every node. */
  readonly hears = {
    'resolution.failed': (note: ResolutionNote) => this.hear(note),
    'resolution.observed': (note: ResolutionNote) => this.hear(note),
  };

  constructor(
    private readonly now: () => number = Date.now,
    private readonly share: (note: ResolutionNote) => void = (note) => this.hear(note),
  ) {}

  /**
   * A request from `workspace` failed with `code`. Another failure with the code it failed with
   * last is kept here and told again only once FAILED_RETOLD_MS have passed: under a flood of
   * refusals each was a note on the bus (a publish to Redis, heard by every node) that changed
   * nothing but the time, a time only the 24 h window reads.
   */
  failed(workspace: string, code: ErrorCode): void {
    const at = this.now();
    const last = this.pending.get(workspace);
    if (last?.code === code && at >= last.told && at - last.told < FAILED_RETOLD_MS) return void (last.at = at);
    this.share({ kind: 'resolution.failed', workspace, code, at });
  }

  /** A request from `workspace` succeeded on `operation` ("METHOD /path"). */
  succeeded(workspace: string, operation: string): void {
    const failure = this.pending.get(workspace);
    if (!failure) return;
    const at = this.now();
    if (at - failure.at > WINDOW_MS) return void this.pending.delete(workspace);
    this.share({ kind: 'resolution.observed', workspace, code: failure.code, operation, at });
  }

  /** A note from any node. */
  hear(note: ResolutionNote): void {
    if (note.kind === 'resolution.failed')
      return void this.pending.set(note.workspace, { code: note.code, at: note.at, told: note.at });
    this.pending.delete(note.workspace);
    this.resolved.delete(note.code);
    const list = this.observed.get(note.code) ?? [];
    list.push({ workspace: note.workspace, operation: note.operation, at: note.at });
    this.observed.set(note.code, list);
  }

  /** The same object while nothing it counts changed: read it, never change it. */
  resolution(code: ErrorCode): ObservedResolution {
    const now = this.now();
    const kept = this.resolved.get(code);
    if (kept && now <= kept.until) return kept.value;
    const value = this.workOut(code, now);
    let oldest = Infinity;
    for (const o of this.observed.get(code) ?? []) if (o.at < oldest) oldest = o.at;
    this.resolved.set(code, { value, until: oldest + WINDOW_MS });
    return value;
  }

  private workOut(code: ErrorCode, now: number): ObservedResolution {
    const since = now - WINDOW_MS;
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
    return {
      ...base,
      status: 'observed',
      observations: recent.length,
      distinctWorkspaces: workspaces,
      path: mostCommon(recent.map((o) => o.operation)),
    };
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
