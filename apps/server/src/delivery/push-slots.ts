// The push client's bound on work under way (docs/delivery.md, "Sending,
// retries and back-pressure" and "Operations guarantees"): pushes in flight
// plus outcomes handed to a caller that has not recorded them yet stay within
// `concurrency` (PUSH_CONCURRENCY), exactly, however many batches share the
// client. That is the most a crash can leave sent but not recorded, so the most
// it re-sends. A message is encrypted before it takes a slot (nothing is sent
// while it is encrypted, so a crash then re-sends nothing): the encryption
// threads work ahead of the slots, bounded apart (`encryptAhead`), as are the
// messages held back for a paused or busy lane.
export class PushSlots {
  /** Messages sent: dispatched and not yet answered. */
  inFlight = 0;
  /**
   * Messages taken from their source and being encrypted, ahead of a slot.
   * Counting them against `concurrency` starved the encryption threads: a
   * slot stays taken until its outcome is recorded (tens of milliseconds), so
   * the 200 slots never held the queue of batches the threads need to stay
   * busy (docs/delivery.md, "Sending, retries and back-pressure").
   */
  encrypting = 0;
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
    /** Messages encrypted ahead of the slots, at most (as many again as `concurrency` by default). */
    private readonly encryptAhead: number = concurrency,
  ) {}

  /** Whether a batch may take one more message from its source. */
  hasRoom(): boolean {
    return this.inFlight + this.awaitingResults + this.reserved + this.encrypting < this.concurrency + this.encryptAhead && this.parked < this.maxParked;
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

  /** A message taken from its source goes to the encryption threads. */
  encryptionStarted(): void {
    this.encrypting++;
  }

  /** Its body is ready (or it could not be encrypted). */
  encryptionEnded(): void {
    this.encrypting--;
    this.notifyIfIdle();
  }

  /** A message's request starts. */
  started(): void {
    this.inFlight++;
  }

  /** A message was handed back (answered, failed or re-routed); wakes close() once none is left. */
  released(): void {
    this.inFlight--;
    this.notifyIfIdle();
  }

  private notifyIfIdle(): void {
    if (this.inFlight === 0 && this.encrypting === 0 && this.idleWaiters.length > 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Resolves when no message is being encrypted or in flight any more. */
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
