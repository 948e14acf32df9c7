// Every write of the embedded store goes through here: one LMDB child transaction per port call,
// committed (and synced to disk) before its promise resolves. A commit that fails leaves nothing
// behind and turns the store unavailable, for reads too (fail closed), until a probe write
// succeeds again: the store recovers by itself once the disk takes writes.
import type { Database, RootDatabase } from 'lmdb';
import { StoreUnavailableError } from '../ports/collection.js';

const PROBE_EVERY_MS = 500;

export class Writer {
  private failure: StoreUnavailableError | null = null;
  private probe: NodeJS.Timeout | null = null;
  private closed = false;
  /** Moves when a write starts and when it ends. */
  private moves = 0;
  private underWay = 0;

  constructor(
    private readonly env: RootDatabase,
    private readonly meta: Database,
  ) {}

  /** Throws while the store is failing or closed. */
  check(): void {
    if (this.closed) throw new StoreUnavailableError(new Error('store closed'));
    if (this.failure) throw this.failure;
  }

  /**
   * A mark of what is stored now, or null while a write is under way. One process holds the
   * directory and every write goes through here, so a value read while no write was under way
   * stays what is stored for as long as the mark is the same.
   */
  get quiet(): number | null {
    return this.underWay === 0 ? this.moves : null;
  }

  get healthy(): boolean {
    return !this.closed && this.failure === null;
  }

  /**
   * Runs `change` inside a write transaction and resolves with its result once durable. An error
   * `change` throws aborts the transaction and reaches the caller as it is; a commit that fails
   * is a StoreUnavailableError.
   */
  async write<R>(change: () => R): Promise<R> {
    this.check();
    let refused = false;
    this.moves++;
    this.underWay++;
    try {
      const result = await this.env.childTransaction(() => {
        try {
          return change();
        } catch (e) {
          refused = true;
          throw e;
        }
      });
      return result as R;
    } catch (e) {
      if (refused) throw e;
      throw this.failed(e);
    } finally {
      this.underWay--;
      this.moves++;
    }
  }

  /**
   * Runs `queue`, which queues writes on LMDB's own write thread (lmdb-js's asynchronous writes,
   * which it applies in one transaction with whatever else is queued) and returns the promise they
   * resolve once durable; resolves with its value. An error `queue` throws reaches the caller as it
   * is; a commit that fails is a StoreUnavailableError, as in `write`.
   */
  async queued<R>(queue: () => Promise<R>): Promise<R> {
    this.check();
    this.moves++;
    this.underWay++;
    let landing: Promise<R>;
    try {
      landing = queue();
    } catch (e) {
      this.underWay--;
      this.moves++;
      throw e;
    }
    try {
      return await landing;
    } catch (e) {
      throw this.failed(e);
    } finally {
      this.underWay--;
      this.moves++;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probe) clearInterval(this.probe);
  }

  private failed(cause: unknown): StoreUnavailableError {
    // lmdb-js parks the commit's own error on a second promise; reading it keeps it handled.
    const detail = (cause as { commitError?: Promise<unknown> }).commitError;
    if (detail) detail.catch(() => undefined);
    this.failure ??= new StoreUnavailableError(cause);
    this.probe ??= setInterval(() => void this.tryProbe(), PROBE_EVERY_MS);
    this.probe.unref();
    return this.failure;
  }

  private async tryProbe(): Promise<void> {
    try {
      await this.env.childTransaction(() => this.meta.put('probe', Date.now()));
    } catch (e) {
      (e as { commitError?: Promise<unknown> }).commitError?.catch(() => undefined);
      return;
    }
    this.failure = null;
    if (this.probe) clearInterval(this.probe);
    this.probe = null;
  }
}
