// What a request's credential and project selection read, cached on this node: tokens by their
// secret's hash, sessions, and the projects, memberships and accounts selection reads. Every write
// to those collections anywhere tells every node through the bus (recordChanges below, the
// `records.changed` notice), so a revocation, a role change, a removal or a plan change reaches
// every cache at once; expiry is checked on each use by the caller (the record carries it).
// While the bus cannot carry notices here, the cache is bypassed (every read goes to the store),
// and whenever this node's receiving connection was lost it is emptied: a notice missed meanwhile
// never leaves a stale entry in use.
import type { Maybe } from '../../store/ports/maybe.js';
import type {
  AccountRecord,
  Collection,
  Doc,
  MemberRecord,
  ProjectRecord,
  ReadsById,
  SessionRecord,
  Store,
  TokenRecord,
} from '../../store/ports/store.js';
import { ownStrings } from './own-strings.js';

export type CachedCollection = 'tokens' | 'sessions' | 'projects' | 'members' | 'accounts';
/** Records that credentials and project selection read were written (ids null: any of the collection's): every node's cache drops them. */
export type RecordsChangedNotice = {
  kind: 'records.changed';
  collection: CachedCollection;
  ids: string[] | null;
};

export const CACHED_COLLECTIONS: readonly CachedCollection[] = [
  'tokens',
  'sessions',
  'projects',
  'members',
  'accounts',
];

/**
 * An entry is read again after this long even with no notice: the bound on how long a notice lost
 * without either end noticing (a publish into a connection that had silently died) can matter.
 */
export const MAX_AGE_MS = 15_000;
/** Entries per collection; the oldest go first beyond it. */
const MAX_ENTRIES = 50_000;

interface Entry<T> {
  value: T | null;
  at: number;
}

/** One collection's entries by key, with the generation that invalidates fills begun before a change. */
class Shelf<T extends Doc> {
  readonly entries = new Map<string, Entry<T>>();
  generation = 0;

  forget(key: string): void {
    this.entries.delete(key);
  }

  put(key: string, value: T | null, at: number): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, at });
  }

  clear(): void {
    this.entries.clear();
    this.generation++;
  }
}

type Records = {
  tokens: TokenRecord;
  sessions: SessionRecord;
  projects: ProjectRecord;
  members: MemberRecord;
  accounts: AccountRecord;
};

export interface IdentityCacheOptions {
  /** Whether notices reach this node now (the bus is local, or connected across nodes). */
  hearsNotices: () => boolean;
  /** Counts the times this node stopped hearing notices (Bus.interruptions): across one, some may have been missed. */
  interruptions: () => number;
  clock: () => number;
}

export class IdentityCache {
  private readonly shelves: { [C in CachedCollection]: Shelf<Records[C]> } = {
    tokens: new Shelf(),
    sessions: new Shelf(),
    projects: new Shelf(),
    members: new Shelf(),
    accounts: new Shelf(),
  };
  /** Tokens are found by their secret's hash and changed by id: which hash each cached id is under. */
  private readonly tokenHashes = new Map<string, string>();
  private interruptions = 0;

  /** Reads through the cache with the ports the authenticator and the selector use: a record held here is answered now. */
  readonly projects: ReadsById<ProjectRecord>;
  readonly members: ReadsById<MemberRecord>;
  readonly accounts: ReadsById<AccountRecord>;
  readonly sessions: ReadsById<SessionRecord>;

  constructor(
    private readonly store: Pick<Store, CachedCollection>,
    private readonly options: IdentityCacheOptions,
  ) {
    this.projects = { get: (id) => this.read('projects', id, () => store.projects.get(id)) };
    this.members = { get: (id) => this.read('members', id, () => store.members.get(id)) };
    this.accounts = { get: (id) => this.read('accounts', id, () => store.accounts.get(id)) };
    // A credential nobody holds is never kept (guesses would fill the cache); a found one is.
    this.sessions = { get: (id) => this.read('sessions', id, () => store.sessions.get(id), false) };
  }

  /** The token whose secret hashes to `secretHash`, or null. */
  tokenBySecretHash(secretHash: string): Maybe<TokenRecord | null> {
    return this.read(
      'tokens',
      secretHash,
      () => this.store.tokens.findOne({ secretHash }),
      false,
      (token) => this.tokenHashes.set(token._id, secretHash),
    );
  }

  /** Records of `collection` changed (null: any of them): their entries go, on this node. */
  changed(collection: CachedCollection, ids: readonly string[] | null): void {
    const shelf = this.shelves[collection];
    shelf.generation++;
    if (ids === null) {
      shelf.clear();
      if (collection === 'tokens') this.tokenHashes.clear();
      return;
    }
    for (const id of ids) {
      if (collection !== 'tokens') shelf.forget(id);
      else {
        const hash = this.tokenHashes.get(id);
        if (hash !== undefined) shelf.forget(hash);
        this.tokenHashes.delete(id);
      }
    }
  }

  /** The notices it hears: a node wrote records it may hold, or notices may have been lost while the bus was away. */
  readonly hears = {
    'records.changed': (notice: RecordsChangedNotice) => this.changed(notice.collection, notice.ids),
    // A catch-up of one board (its channel confirmed late) lost no notice: the records stand.
    'catch-up': (notice: { boardId?: string }) => {
      if (notice.boardId === undefined) this.clear();
    },
  };

  /** Everything goes (notices may have been missed). */
  clear(): void {
    for (const shelf of Object.values(this.shelves)) shelf.clear();
    this.tokenHashes.clear();
  }

  /** Entries held now, for tests and the operators' figures. */
  get size(): number {
    return Object.values(this.shelves).reduce((n, s) => n + s.entries.size, 0);
  }

  private usable(): boolean {
    const interruptions = this.options.interruptions();
    if (interruptions !== this.interruptions) {
      this.clear(); // notices may have been missed: nothing kept before is trusted
      this.interruptions = interruptions;
    }
    return this.options.hearsNotices();
  }

  private read<C extends CachedCollection>(
    collection: C,
    key: string,
    load: () => Promise<Records[C] | null>,
    keepMissing = true,
    kept?: (value: Records[C]) => void,
  ): Maybe<Records[C] | null> {
    if (!this.usable()) return load();
    const shelf = this.shelves[collection] as Shelf<Records[C]>;
    const now = this.options.clock();
    const entry = shelf.entries.get(key);
    if (entry && now - entry.at < MAX_AGE_MS) return entry.value;
    return this.fill(shelf, key, load, now, keepMissing, kept);
  }

  private async fill<T extends Doc>(
    shelf: Shelf<T>,
    key: string,
    load: () => Promise<T | null>,
    now: number,
    keepMissing: boolean,
    kept?: (value: T) => void,
  ): Promise<T | null> {
    const generation = shelf.generation;
    const read = await load();
    // A change heard while the store answered may be newer than what it said: keep nothing then.
    if (!(this.usable() && shelf.generation === generation && (read !== null || keepMissing))) return read;
    // What is kept is answered from now on, the first caller included (identities are kept per record).
    const value = read && ownStrings(read);
    shelf.put(key, value, now);
    if (value) kept?.(value);
    return value;
  }
}

type Changed = (collection: CachedCollection, ids: string[] | null) => void;

/**
 * The store with every write to the cached collections told to `changed` once it is done (or
 * failed, when it may have landed anyway): the one place no writer can forget.
 */
export function recordChanges(store: Store, changed: Changed): Store {
  const wrapped: Partial<Pick<Store, CachedCollection>> = {};
  for (const name of CACHED_COLLECTIONS)
    wrapped[name] = telling(store[name] as Collection<Doc>, name, changed) as never;
  return Object.assign(Object.create(Object.getPrototypeOf(store) as object) as Store, store, wrapped);
}

function telling<T extends Doc>(collection: Collection<T>, name: CachedCollection, changed: Changed): Collection<T> {
  const after = <R>(write: Promise<R>, ids: string[] | null): Promise<R> => write.finally(() => changed(name, ids));
  return {
    get: (id) => collection.get(id),
    versionOf: (id) => collection.versionOf(id),
    findOne: (filter) => collection.findOne(filter),
    find: (filter, options) => collection.find(filter, options),
    select: (filter, fields, options) => collection.select(filter, fields, options),
    count: (filter) => collection.count(filter),
    insert: (doc) => after(collection.insert(doc), [doc._id]),
    insertMissing: (docs) =>
      after(
        collection.insertMissing(docs),
        docs.map((d) => d._id),
      ),
    update: (id, expectedVersion, changes, unset) =>
      after(collection.update(id, expectedVersion, changes, unset), [id]),
    delete: (id, expectedVersion) => after(collection.delete(id, expectedVersion), [id]),
    deleteMany: (filter) => after(collection.deleteMany(filter), null),
  };
}
