// The push client's bound on work under way (docs/delivery.md, "Sending,
// retries and back-pressure" and "Operations guarantees"): pushes in flight
// plus outcomes handed to a caller that has not recorded them yet stay within
// `concurrency` (PUSH_CONCURRENCY), exactly, however many batches share the
// client. That is the most a crash can leave sent but not recorded, so the most
// it re-sends. Messages held back for a paused or busy lane are bounded apart.

export class PushSlots {
  /** Messages being encrypted or sent. */
  inFlight = 0;
  /**
   * Outcomes handed to an onResult that has not settled yet (the caller is
   * still recording them). They count against `concurrency` with the requests
   * in flight, so a crash can leave at most `concurrency` pushes sent but not
   * recorded (docs/delivery.md: duplicates after a crash ≤ concurrency).
   */
  awaitingResults = 0;
  /** Messages held for a paused or busy lane, all lanes together. */
  parked = 0;
  /**
   * Slots a batch has claimed before pulling its next message from an
   * (async) source. Without them, every batch woken by one free slot passed
   * the room check before any of them admitted its message.
   */
  private reserved = 0;
  private readonly roomWaiters = new Set<() => void>();
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    /** Pushes in flight plus outcomes not yet recorded, at most. */
    readonly concurrency: number,
    private readonly maxParked: number,
  ) {}

  /** Whether a batch may take one more message from its source. */
  hasRoom(): boolean {
    return this.inFlight + this.awaitingResults + this.reserved < this.concurrency && this.parked < this.maxParked;
  }

  /**
   * Whether one more push may start: pushes in flight plus outcomes not yet
   * recorded stay within `concurrency`, exactly (docs/delivery.md: a crash
   * re-sends at most PUSH_CONCURRENCY pushes per process).
   */
  canStart(): boolean {
    return this.inFlight + this.awaitingResults < this.concurrency;
  }

  /** A batch holds a slot while it waits for its source's next message. */
  reserve(): void {
    this.reserved++;
  }

  unreserve(): void {
    this.reserved--;
  }

  /** A message starts: its encryption, then its request. */
  started(): void {
    this.inFlight++;
  }

  /** A message was handed back (answered, failed or re-routed); wakes close() once none is left. */
  released(): void {
    this.inFlight--;
    if (this.inFlight === 0 && this.idleWaiters.length > 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Resolves when no message is in flight any more. */
  whenIdle(): Promise<void> {
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** `wake` is called when there may be room again (or the client closes); it removes itself. */
  addRoomWaiter(wake: () => void): void {
    this.roomWaiters.add(wake);
  }

  removeRoomWaiter(wake: () => void): void {
    this.roomWaiters.delete(wake);
  }

  /** Lets the waiting batches try again once there is room. */
  wakeRoomWaiters(): void {
    if (this.roomWaiters.size > 0 && this.hasRoom()) this.wakeAllRoomWaiters();
  }

  /** Wakes every waiting batch, room or not (the client is closing: they stop pulling). */
  wakeAllRoomWaiters(): void {
    for (const wake of [...this.roomWaiters]) wake();
  }
}
