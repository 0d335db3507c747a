// The push client's bookkeeping of where messages go: one keep-alive pool per
// push-service origin, and per origin one lane per sender (VAPID key), which
// is what a 429 pauses (docs/security.md, "Push-service answers across
// tenants"). Idle lanes and origins are dropped so the maps stay small.
import { Pool } from 'undici';
import type { Clock } from '../platform/clock';
import type { OriginStats } from './push-client-options';
import type { Lane, OriginState } from './push-request';
import { pushServiceOf } from './push-services';

const IDLE_MS = 10 * 60 * 1000;

export class PushLanes {
  private readonly origins = new Map<string, OriginState>();

  constructor(
    private readonly poolOptions: Pool.Options,
    private readonly clock: Clock,
  ) {}

  /** Every origin with its lanes (stats, shutdown). */
  all(): IterableIterator<OriginState> {
    return this.origins.values();
  }

  /** The origin's state, its pool opened on first use. */
  origin(origin: string): OriginState {
    const existing = this.origins.get(origin);
    if (existing) return existing;
    const state: OriginState = {
      origin,
      service: pushServiceOf(origin),
      pool: new Pool(origin, this.poolOptions),
      inFlight: 0,
      transportFailures: 0,
      pausedUntil: 0,
      pauseCode: 'unreachable',
      lastUsed: this.clock.now(),
      lanes: new Map(),
    };
    this.origins.set(origin, state);
    this.dropIdleOrigins();
    return state;
  }

  /** The lane of (origin, VAPID key), and whether it was just opened (the caller applies an origin-wide pause in force). */
  lane(originUrl: string, vapidKey: string): { lane: Lane; opened: boolean } {
    const origin = this.origin(originUrl);
    const existing = origin.lanes.get(vapidKey);
    if (existing) return { lane: existing, opened: false };
    const lane: Lane = {
      key: vapidKey,
      origin,
      inFlight: 0,
      parked: [],
      paused: false,
      pausedUntil: 0,
      pauseCode: 'rate_limited',
      pauseTimer: undefined,
      probing: false,
      lastUsed: this.clock.now(),
      headers: undefined,
      headersFor: { authorization: '', ttl: -1, urgency: undefined, topic: undefined },
    };
    this.dropIdleLanes(origin);
    origin.lanes.set(vapidKey, lane);
    return { lane, opened: true };
  }

  /** Every origin's counts, pause and connections, with its lanes' (PushClient.stats). */
  stats(): OriginStats[] {
    return [...this.origins.values()].map((o) => {
      const lanes = [...o.lanes.values()].map((lane) => ({
        vapidKey: lane.key,
        inFlight: lane.inFlight,
        parked: lane.parked.length,
        paused: lane.paused,
        pausedUntil: lane.paused ? lane.pausedUntil : null,
      }));
      const pausedUntil = Math.max(0, ...lanes.map((lane) => lane.pausedUntil ?? 0));
      return {
        origin: o.origin,
        inFlight: o.inFlight,
        parked: lanes.reduce((sum, lane) => sum + lane.parked, 0),
        paused: lanes.some((lane) => lane.paused),
        pausedUntil: pausedUntil || null,
        connections: o.pool.stats.connected,
        lanes,
      };
    });
  }

  /** Closes every pool (the client is shutting down). */
  async close(): Promise<void> {
    await Promise.all([...this.origins.values()].map((o) => o.pool.close()));
    this.origins.clear();
  }

  private isIdle(lane: Lane, idleSince: number): boolean {
    return lane.inFlight === 0 && lane.parked.length === 0 && !lane.paused && lane.lastUsed < idleSince;
  }

  /** One lane per site sending to an origin: keep the map from growing with sites that stopped sending. */
  private dropIdleLanes(origin: OriginState): void {
    if (origin.lanes.size < 1024) return;
    const idleSince = this.clock.now() - IDLE_MS;
    for (const [key, lane] of origin.lanes) if (this.isIdle(lane, idleSince)) origin.lanes.delete(key);
  }

  /** Push endpoints come from a handful of origins; keep the map from growing with odd ones. */
  private dropIdleOrigins(): void {
    if (this.origins.size <= 256) return;
    const idleSince = this.clock.now() - IDLE_MS;
    for (const [key, origin] of this.origins) {
      if (origin.inFlight === 0 && origin.lastUsed < idleSince && [...origin.lanes.values()].every((lane) => this.isIdle(lane, idleSince))) {
        this.origins.delete(key);
        void origin.pool.close();
      }
    }
  }
}
