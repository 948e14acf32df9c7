// What the board tells an agent between its calls: a lease it lost, a lease running out, a shout
// addressed to it. Each notice goes out as an MCP logging message where the client listens, and
// is put first in the agent's next tool result, since most clients never show notifications to
// the model.

export type Notice =
  | {
      kind: 'lease.lost';
      workId: string;
      purpose: 'work' | 'verify' | null;
      /** Which lease of the item (a later lease on the same item is another one). */
      fencingToken: number | null;
      /** expired, revoked (blocked, cancelled, superseded, overridden, verified, rewound), not-held, refused, unreachable. */
      reason: string;
      /** The refusal's code, or null when the board's log or socket told. */
      code: string | null;
      detail: string | null;
    }
  | { kind: 'lease.expiring'; workId: string; expiresAt: string; hint: string }
  | { kind: 'shout.direct'; shoutId: string; from: string; text: string; workId: string | null; at: string };

export type NoticeLevel = 'error' | 'warning' | 'info';

export function noticeLevel(notice: Notice): NoticeLevel {
  return notice.kind === 'lease.lost' ? 'error' : notice.kind === 'lease.expiring' ? 'warning' : 'info';
}

/** One line an agent reads and acts on. */
export function noticeText(notice: Notice): string {
  switch (notice.kind) {
    case 'lease.lost': {
      const lease = notice.purpose ? `${notice.purpose} lease` : 'lease';
      const why = [notice.reason, notice.detail && notice.detail !== notice.reason ? notice.detail : null, notice.code]
        .filter(Boolean)
        .join('; ');
      const stop =
        notice.purpose === 'verify'
          ? `stop verifying ${notice.workId}`
          : `stop working on ${notice.workId} now: nothing submitted under that lease will be accepted`;
      return `LEASE LOST: your ${lease} on ${notice.workId} has ended (${why}). ${capital(stop)}. Call board_status, and claim_work again only if it is still ready.`;
    }
    case 'lease.expiring':
      return `LEASE RUNNING OUT: your lease on ${notice.workId} ends at ${notice.expiresAt}. ${notice.hint}`;
    case 'shout.direct':
      return `DIRECT SHOUT from ${notice.from}${notice.workId ? ` about ${notice.workId}` : ''} (${notice.at}): ${notice.text}`;
  }
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

const ORDER: Record<Notice['kind'], number> = { 'lease.lost': 0, 'lease.expiring': 1, 'shout.direct': 2 };

/** Notices waiting for the agent's next call: each once, losses first. */
export class NoticeQueue {
  private pending: Notice[] = [];
  private readonly seen = new Set<string>();

  /** False when the same notice was queued before (a loss told by the socket and the keeper both). */
  push(notice: Notice): boolean {
    const key = keyOf(notice);
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    if (this.seen.size > 2000) this.seen.delete(this.seen.values().next().value!);
    this.pending.push(notice);
    return true;
  }

  /** Records a notice the agent was told some other way (a refused call's own answer): it is not queued, nor queued again later. */
  told(notice: Notice): void {
    this.seen.add(keyOf(notice));
  }

  /** Takes every pending notice, losses first; a warning about a lease since lost is dropped. */
  drain(): Notice[] {
    const out = this.pending;
    this.pending = [];
    const lost = new Set(out.filter((n) => n.kind === 'lease.lost').map((n) => (n as { workId: string }).workId));
    // A lease can be warned about again after a renewal: forget warnings once they are delivered.
    for (const n of out) if (n.kind === 'lease.expiring') this.seen.delete(keyOf(n));
    return out
      .filter((n) => !(n.kind === 'lease.expiring' && lost.has(n.workId)))
      .sort((a, b) => ORDER[a.kind] - ORDER[b.kind]);
  }
}

function keyOf(n: Notice): string {
  if (n.kind === 'shout.direct') return `shout:${n.shoutId}`;
  if (n.kind === 'lease.expiring') return `expiring:${n.workId}:${n.expiresAt}`;
  return `lost:${n.workId}:${n.purpose}:${n.fencingToken}`;
}
