import type { NamespaceState } from '@quota/domain';
import type { DataSource } from 'typeorm';
import { headOf, reservationToJson } from '../head.js';

/** A namespace's complete state (every live reservation) at one version, and where its last event sits. */
export interface DueSnapshot {
  readonly namespace: string;
  readonly state: NamespaceState;
  readonly position: string;
  readonly atMs: number;
}

/**
 * Live reservations the waiting snapshots hold at most, together (each state keeps its own maps
 * of them); past it the oldest waiting ones are dropped, the newest never.
 */
const WAITING_RESERVATIONS_MAX = 200_000;
/** Reservations serialized between two turns of the event loop. */
const SERIALIZED_PER_TURN = 1000;

/**
 * Writes the projection's full snapshots (usage_snapshots) after the step that reached them
 * has committed, one at a time, on a connection of its own. A snapshot holds every live
 * reservation of its namespace, so it costs in proportion to them, and written inside the step
 * it held every event behind it back that long, growing with the namespace (measured with
 * `npm run bench:lag`: docs/concepts/projection.md, "Snapshots are written after their step").
 * Here the steps go on while it is written, and its serialization yields to them every
 * SERIALIZED_PER_TURN reservations.
 *
 * A snapshot is a cache of a fold (the state at a version is fixed by the events up to it), so
 * one written after later steps, or never (the process ended first, a write failed, or it was
 * dropped while more waited than WAITING_RESERVATIONS_MAX allows), costs a longer fold from an
 * older one, never a wrong answer (retention.ts FOLD_START takes the newest there is). A
 * catch-up that makes them faster than they are written waits for them (`backlog`).
 */
export class SnapshotWriter {
  private waiting: DueSnapshot[] = [];
  private waitingReservations = 0;
  private writing: Promise<void> | undefined;
  /** The first write that failed since the last drain (only the first is kept: a process that never drains holds one). */
  private failure: { readonly error: unknown } | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly onError?: (error: unknown) => void,
  ) {}

  /** Queues a snapshot, to be written after those queued before it. */
  add(snapshot: DueSnapshot): void {
    this.waiting.push(snapshot);
    this.waitingReservations += snapshot.state.reservations.size;
    while (this.waiting.length > 1 && this.waitingReservations > WAITING_RESERVATIONS_MAX) this.take();
    this.writing ??= this.writeAll();
  }

  /** Snapshots queued and not written yet (the one being written included). */
  get backlog(): number {
    return this.waiting.length + (this.writing ? 1 : 0);
  }

  /** Forgets the snapshots not started yet (a reset of the read models). */
  clear(): void {
    this.waiting = [];
    this.waitingReservations = 0;
  }

  /** Resolves once every snapshot queued so far is written; throws the first write that failed since the last drain. */
  async drain(): Promise<void> {
    while (this.writing) await this.writing;
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure.error;
  }

  private async writeAll(): Promise<void> {
    try {
      for (let next = this.take(); next; next = this.take()) {
        try {
          await this.write(next);
        } catch (error) {
          this.failure ??= { error };
          this.onError?.(error);
        }
      }
    } finally {
      this.writing = undefined;
    }
  }

  private take(): DueSnapshot | undefined {
    const next = this.waiting.shift();
    if (next) this.waitingReservations -= next.state.reservations.size;
    return next;
  }

  private async write({ namespace, state, position, atMs }: DueSnapshot): Promise<void> {
    const reservations = await serializeReservations(state);
    // One row per statement with plain jsonb parameters: an array parameter would escape and
    // parse every quote of the reservations' JSON a second time.
    await this.dataSource.query(
      `INSERT INTO usage_snapshots (namespace, version, position, last_event_at, state, reservations)
       VALUES ($1, $2, $3, to_timestamp($4::float8 / 1000), $5::jsonb, $6::jsonb)
       ON CONFLICT (namespace, version) DO NOTHING`,
      [namespace, state.version, position, atMs, JSON.stringify(headOf(state)), reservations],
    );
  }
}

/** The state's live reservations as a JSON array (head.ts ReservationJson), yielding to the event loop as it goes. */
async function serializeReservations(state: NamespaceState): Promise<string> {
  const parts: string[] = [];
  for (const reservation of state.reservations.values()) {
    parts.push(JSON.stringify(reservationToJson(reservation)));
    if (parts.length % SERIALIZED_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return `[${parts.join(',')}]`;
}
