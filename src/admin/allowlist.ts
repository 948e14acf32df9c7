// The allowlist (DOMAIN.md "Operators"): addresses, CIDR ranges and email domains operators exempt
// from the per-address budgets (the `address` and `poll` rate classes: sign-up, sign-in, recovery,
// the device flow, enrollment). A client address inside an address or range entry draws on no
// per-address budget. An email of a listed domain (or a subdomain of one) on sign-up or sign-in
// draws on a budget of that email instead of the address's (the same limit), so a company behind
// one address is not throttled as one client while guessing one account's password stays as slow;
// as the email is only the client's word, such requests still draw on ten times the address budget
// (DOMAIN_BUDGET_FACTOR), so listing a domain never turns the address budget off for anyone.
//
// Each node keeps the list in memory and answers from it without a store read (every request of
// those classes asks): read again at once after a change made here, on every node told of it over
// the bus (`allowlist.changed`), and every REFRESH_MS besides, so a node that missed the notice
// (the bus down) still follows within REFRESH_MS. The list is small by nature and capped
// (MAX_ENTRIES), so reading it whole is one bounded read. Address and range matching is
// TRUSTED_PROXIES' own (src/address-list.ts).
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { DuplicateKeyError, type AllowlistRecord, type Store } from '../../store/ports/store.js';
import { AppError } from '../errors/app-error.js';
import { parseProxyList, plainAddress, type ProxyList } from '../address-list.js';
import type { Exemption } from '../ratelimit/limiter.js';
import { auditOperatorAction, type OperatorCtx } from './audit.js';

export const REFRESH_MS = 10_000;
export const MAX_ENTRIES = 10_000;
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

export type AllowlistKind = AllowlistRecord['kind'];

/** An entry as written by an operator, in its one spelling; INVALID_INPUT when it is none of the three. */
export function canonicalEntry(raw: string): { kind: AllowlistKind; value: string } {
  const value = raw.trim().toLowerCase();
  const bad = () =>
    new AppError(
      'INVALID_INPUT',
      'value must be an IP address (203.0.113.7, 2001:db8::1), a CIDR range (203.0.113.0/24, 2001:db8::/48) or an email domain (example.com).',
    );
  if (value.includes('/')) {
    const [address = '', bits = ''] = value.split('/');
    if (!isIP(address) || !/^\d{1,3}$/.test(bits)) throw bad();
    const entry = `${plainAddress(address)}/${Number(bits)}`;
    try {
      parseProxyList(entry);
    } catch {
      throw bad();
    }
    return { kind: 'cidr', value: entry };
  }
  if (isIP(value)) return { kind: 'address', value: plainAddress(value) };
  const domain = value.startsWith('@') ? value.slice(1) : value;
  if (!DOMAIN.test(domain)) throw bad();
  return { kind: 'domain', value: domain };
}

const idOf = (kind: AllowlistKind, value: string): string => `${kind}:${value}`;

export interface AllowlistEntry {
  id: string;
  kind: AllowlistKind;
  value: string;
  reason: string;
  addedBy: string;
  at: number;
}

const entryOf = (r: AllowlistRecord): AllowlistEntry => ({
  id: r._id,
  kind: r.kind,
  value: r.value,
  reason: r.reason,
  addedBy: r.addedBy,
  at: r.at,
});

type Ctx = OperatorCtx;

/** An operator changed the allowlist: every node reads it again. */
export type AllowlistChangedNotice = {
  kind: 'allowlist.changed';
};

export class Allowlist implements Exemption {
  /** Newest first. */
  private entries: AllowlistRecord[] = [];
  private ranges: ProxyList = parseProxyList('');
  private domains = new Set<string>();
  private loading: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Pick<Store, 'allowlist' | 'audit'>,
    private readonly logger: Pick<Logger, 'warn'>,
    /** Tells the other nodes the list changed (they call refresh()). */
    private readonly announce: () => void = () => undefined,
  ) {}

  /** The notices it hears: an operator changed the list on some node, so read it again. */
  readonly hears = {
    'allowlist.changed': (_notice: AllowlistChangedNotice) =>
      void this.refresh().catch((e: unknown) =>
        this.logger.warn({ err: e }, 'allowlist: reading it after a change failed; read again within 10 s'),
      ),
  };

  /** Reads the list now and then every REFRESH_MS until stop(). */
  async start(): Promise<void> {
    this.timer = setInterval(
      () =>
        void this.refresh().catch((e: unknown) =>
          this.logger.warn({ err: e }, 'allowlist: reading it failed; the last list read stays in force'),
        ),
      REFRESH_MS,
    );
    this.timer.unref();
    await this.refresh().catch((e: unknown) =>
      this.logger.warn({ err: e }, 'allowlist: reading it failed; read again in 10 s'),
    );
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A read that starts after this call (one under way may have started before a change). */
  private async reload(): Promise<void> {
    await this.loading?.catch(() => undefined);
    await this.refresh();
  }

  /** Reads the whole (capped) list; one read at a time, later callers share it. */
  refresh(): Promise<void> {
    this.loading ??= this.load().finally(() => (this.loading = null));
    return this.loading;
  }

  private async load(): Promise<void> {
    const rows = await this.store.allowlist.find(
      {},
      {
        sort: [
          ['at', -1],
          ['_id', -1],
        ],
        limit: MAX_ENTRIES,
      },
    );
    const ranges = rows.filter((r) => r.kind !== 'domain').map((r) => r.value);
    this.ranges = parseProxyList(ranges.join(','));
    this.domains = new Set(rows.filter((r) => r.kind === 'domain').map((r) => r.value));
    this.entries = rows;
  }

  /** Whether a client address, or the email a sign-up or sign-in names, is exempt from the per-address budget. */
  exempt(address: string, email?: string): 'address' | 'domain' | null {
    if (this.entries.length === 0) return null;
    if (this.ranges.trusts(plainAddress(address))) return 'address';
    const at = email === undefined ? -1 : email.indexOf('@');
    // An address as sign-up takes it (one @, something before it); anything else counts as the address's.
    if (
      email !== undefined &&
      this.domains.size > 0 &&
      at > 0 &&
      at === email.lastIndexOf('@') &&
      email.length <= 254
    ) {
      let domain = email
        .slice(at + 1)
        .trim()
        .toLowerCase();
      // The domain itself or any parent: an entry example.com covers eu.example.com.
      for (let i = 0; domain.includes('.') && i < 10; i++) {
        if (this.domains.has(domain)) return 'domain';
        domain = domain.slice(domain.indexOf('.') + 1);
      }
    }
    return null;
  }

  /** A page of entries, newest first (read fresh from the store). */
  async list(
    cursor: string | undefined,
    limit: number,
  ): Promise<{ entries: AllowlistEntry[]; nextCursor: string | null }> {
    await this.refresh();
    let start = 0;
    if (cursor !== undefined) {
      const m = /^(\d{1,16}):(.{1,400})$/.exec(cursor);
      if (!m) throw new AppError('INVALID_CURSOR', 'Pass nextCursor exactly as received, or omit it.');
      const [at, id] = [Number(m[1]), m[2]!];
      // The first entry after the cursor's place in the order (at desc, id desc), wherever the entry itself went.
      start = this.entries.findIndex((r) => r.at < at || (r.at === at && r._id < id));
      if (start < 0) start = this.entries.length;
    }
    const page = this.entries.slice(start, start + limit);
    const last = page.at(-1);
    return {
      entries: page.map(entryOf),
      nextCursor: last && start + limit < this.entries.length ? `${last.at}:${last._id}` : null,
    };
  }

  /** Adds an entry (201) or answers the one there is (200, unchanged, no row). */
  async add(ctx: Ctx, raw: string, reason: string): Promise<{ entry: AllowlistEntry; created: boolean }> {
    const { kind, value } = canonicalEntry(raw);
    const existing = await this.store.allowlist.get(idOf(kind, value));
    if (existing) return { entry: entryOf(existing), created: false };
    await this.reload(); // the count as it stands now: a read under way may have begun before entries were removed
    if (this.entries.length >= MAX_ENTRIES)
      throw new AppError(
        'ALLOWLIST_LIMIT',
        `The allowlist holds ${MAX_ENTRIES} entries; remove some, or list a range or domain instead of many addresses.`,
      );
    const record: AllowlistRecord = {
      _id: idOf(kind, value),
      version: 1,
      kind,
      value,
      reason,
      addedBy: ctx.identity!.principal,
      at: ctx.now,
    };
    try {
      await this.store.allowlist.insert(record);
    } catch (e) {
      if (!(e instanceof DuplicateKeyError)) throw e;
      const raced = await this.store.allowlist.get(record._id);
      if (raced) return { entry: entryOf(raced), created: false };
      throw e;
    }
    await auditOperatorAction(this.store, ctx, {
      action: 'allowlist.add',
      target: `allowlist:${value}`,
      reason,
      data: { kind, value },
    });
    await this.reload();
    this.announce();
    return { entry: entryOf(record), created: true };
  }

  /** Removes an entry; NOT_FOUND when there is none. */
  async remove(ctx: Ctx, raw: string, reason: string): Promise<AllowlistEntry> {
    const { kind, value } = canonicalEntry(raw);
    const existing = await this.store.allowlist.get(idOf(kind, value));
    if (!existing || !(await this.store.allowlist.delete(existing._id)))
      throw new AppError('NOT_FOUND', 'No allowlist entry has that value.');
    await auditOperatorAction(this.store, ctx, {
      action: 'allowlist.remove',
      target: `allowlist:${value}`,
      reason,
      data: { kind, value, addedBy: existing.addedBy, addedAt: existing.at, addedReason: existing.reason },
    });
    await this.reload();
    this.announce();
    return entryOf(existing);
  }
}
