// Who acted, by name, in what sockets are sent: an agent by its token's name, a person by their
// display name (their address only to a reader who may see it, look.ts seesAddresses). Names are
// read from the store a batch at a time and kept on this node, so a busy board's events cost no
// read each: a frame built before its actor's name was read goes out by id alone, and the name
// follows on the next frames (a page keeps the names it heard, so its earlier rows are named too).
import type { Store } from '../../store/ports/store.js';

/** What is known of one principal. */
interface Known {
  /** The token's name, or the person's display name; null when there is none (a token gone, no display name). */
  name: string | null;
  /** A person's address (never an agent's); null when unknown. */
  email: string | null;
  at: number;
}

export type NamesPorts = Pick<Store, 'tokens' | 'accounts'>;

/** A name is read again this long after it was read (a renamed token shows within it). */
export const NAME_KEPT_MS = 60_000;
/** Principals whose names a node keeps; the least recently read are forgotten beyond. */
const REMEMBERED = 10_000;
/** Principals read in one store query at most. */
const BATCH = 200;

const agentId = (principal: string) => (principal.startsWith('agent:') ? principal.slice(6) : null);
const accountId = (principal: string) => (principal.startsWith('user:') ? principal.slice(5) : null);

export class Names {
  private readonly known = new Map<string, Known>();
  /** Reads under way, by principal: a second ask waits for the same read. */
  private readonly reading = new Map<string, Promise<void>>();

  constructor(private readonly deps: { store: NamesPorts; clock: () => number }) {}

  /**
   * The name every reader of the principal's board may see (a token's name, a display name), as
   * known now; undefined when not. `addresses`: a person without a display name by their address.
   */
  nameOf(principal: string, addresses = false): string | undefined {
    const known = this.known.get(principal);
    return known?.name ?? (addresses ? known?.email : null) ?? undefined;
  }

  /** Whether the principal was read (named or not): a frame about it need not wait for a read. */
  has(principal: string): boolean {
    return this.known.has(principal);
  }

  /**
   * Reads the names of `principals` not known (or read NAME_KEPT_MS ago); resolves once each
   * is known (a stale one is read again meanwhile, its old name still shown). Never rejects: a
   * failed read leaves the principal unnamed until it is asked for again.
   */
  learn(principals: Iterable<string>): Promise<void> {
    const now = this.deps.clock();
    const missing: string[] = [];
    const waits: Promise<void>[] = [];
    for (const p of new Set(principals)) {
      const known = this.known.get(p);
      const pending = this.reading.get(p);
      if (pending) {
        if (!known) waits.push(pending);
      } else if (!known || now - known.at >= NAME_KEPT_MS) {
        if (agentId(p) === null && accountId(p) === null) continue;
        missing.push(p);
      }
    }
    for (let i = 0; i < missing.length; i += BATCH) {
      const batch = missing.slice(i, i + BATCH);
      const read = this.read(batch).finally(() => {
        for (const p of batch) if (this.reading.get(p) === read) this.reading.delete(p);
      });
      for (const p of batch) this.reading.set(p, read);
      if (batch.some((p) => !this.known.has(p))) waits.push(read);
    }
    return waits.length ? Promise.all(waits).then(() => undefined) : Promise.resolve();
  }

  /** The names of `principals` for one reader, read first where not known; `addresses`: a person without a display name by their address. */
  async named(principals: Iterable<string>, addresses: boolean): Promise<Map<string, string>> {
    const wanted = [...new Set(principals)];
    await this.learn(wanted);
    const names = new Map<string, string>();
    for (const p of wanted) {
      const name = this.nameOf(p, addresses);
      if (name) names.set(p, name);
    }
    return names;
  }

  private async read(principals: string[]): Promise<void> {
    const agents = principals.flatMap((p) => agentId(p) ?? []);
    const people = principals.flatMap((p) => accountId(p) ?? []);
    try {
      const [tokens, accounts] = await Promise.all([
        agents.length
          ? this.deps.store.tokens.select({ agentId: { $in: agents } }, ['agentId', 'name', 'createdAt'])
          : [],
        people.length ? this.deps.store.accounts.select({ _id: { $in: people } }, ['displayName', 'email']) : [],
      ]);
      const at = this.deps.clock();
      // An agent keeps its principal across reissues: its newest token names it.
      const newest = new Map<string, { name: string; createdAt: number }>();
      for (const t of tokens) {
        const held = newest.get(t.agentId);
        if (!held || t.createdAt > held.createdAt) newest.set(t.agentId, t);
      }
      for (const id of agents) this.keep(`agent:${id}`, { name: newest.get(id)?.name ?? null, email: null, at });
      const byId = new Map(accounts.map((a) => [a._id, a]));
      for (const id of people) {
        const a = byId.get(id);
        this.keep(`user:${id}`, { name: a?.displayName ?? null, email: a?.email ?? null, at });
      }
    } catch {
      // The ids stand in; the next ask reads again.
    }
  }

  private keep(principal: string, known: Known): void {
    this.known.delete(principal); // re-inserted last: the Map's order is then least recently read first
    this.known.set(principal, known);
    if (this.known.size > REMEMBERED) this.known.delete(this.known.keys().next().value!);
  }
}
