// A node's requests in flight and whether it is draining: the transport counts them, readiness
// and the node's figures read them, and shutdown waits on them.

export class Drain {
  private inFlightNow = 0;
  private drainingNow = false;
  private idle: (() => void) | null = null;

  get draining(): boolean {
    return this.drainingNow;
  }

  inFlight(): number {
    return this.inFlightNow;
  }

  started(): void {
    this.inFlightNow++;
  }

  finished(): void {
    this.inFlightNow--;
    if (this.inFlightNow === 0) this.idle?.();
  }

  /** Stops taking requests (false when already draining); `settled()` then waits for those in flight. */
  begin(): boolean {
    if (this.drainingNow) return false;
    this.drainingNow = true;
    return true;
  }

  /** Resolves once nothing is in flight, or after `graceMs`, whichever is first. */
  settled(graceMs: number): Promise<void> {
    if (this.inFlightNow === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.idle = resolve;
      setTimeout(resolve, graceMs).unref();
    });
  }
}
