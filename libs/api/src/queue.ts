/**
 * The reservation queue's answers: a reserve with a `wait` that does not fit answers
 * 202 with a QueuedAnswer; `GET …/reservations/{id}` of a reservation that waits, or waited and
 * was cancelled or expired, answers a QueuedReservation; `GET /v1/namespaces/{ns}/queue` a
 * NamespaceQueue. Quantities are canonical Kubernetes strings, times RFC 3339.
 */

/** One quota a queued reservation waits for, with its resources that are short. */
export interface WaitingFor {
  /** The quota's name (a shared quota's, as its denial names it). */
  readonly quota: string;
  readonly resources: readonly { readonly resource: string; readonly requested: string; readonly used: string; readonly hard: string }[];
}

export type QueuedState = 'queued' | 'cancelled' | 'expired';

/** The 202 of a reserve that waits. */
export interface QueuedAnswer {
  readonly id: string;
  readonly namespace: string;
  readonly state: 'queued';
  /** 1-based, in the queue's order (priority, then arrival), when it was queued. */
  readonly position: number;
  readonly waitingFor: readonly WaitingFor[];
  /** Its deadline: it expires (an `Expired` event) if not admitted by then. */
  readonly expiresAt: string;
  /** The global position of its Queued event, to read after with `?minPosition=`. */
  readonly ledgerPosition?: string;
}

/** A reservation that waits, or that stopped waiting without being admitted. */
export interface QueuedReservation {
  readonly id: string;
  readonly namespace: string;
  readonly state: QueuedState;
  /** Queued only: 1-based, in the queue's order now. */
  readonly position?: number;
  readonly priority: number;
  readonly resources: Readonly<Record<string, string>>;
  readonly object: { readonly group: string; readonly resource: string; readonly kind?: string; readonly name?: string };
  readonly waitingFor: readonly WaitingFor[];
  readonly queuedAt: string;
  readonly expiresAt: string;
  /** How many reservations behind it were admitted before it (the BestEffortFIFO bound counts these). */
  readonly passed: number;
  /** Cancelled or expired: when, and (expired) why. */
  readonly endedAt?: string;
  readonly reason?: string;
  /**
   * In a queue's listing: how long the namespace's recent waiters asking for about as much (the same
   * resources, each within a factor of two) waited before admission; absent below 5 such waits.
   */
  readonly estimate?: { readonly samples: number; readonly p50Seconds: number; readonly p90Seconds: number };
}

export interface NamespaceQueue {
  readonly namespace: string;
  /** In the queue's order. */
  readonly items: readonly QueuedReservation[];
}

/** The waiters a shared quota's fair drain serves: per waiting namespace, in the order it serves them (lowest weighted dominant share first). */
export interface SharedQuotaQueue {
  /** The shared quota's key (`clusterresourcequotas/NAME`, `hierarchicalresourcequotas/NS/NAME`). */
  readonly key: string;
  readonly namespaces: readonly {
    readonly namespace: string;
    /** Its `quota-ledger.io/fair-share-weight` (1 when absent or invalid). */
    readonly weight: number;
    /** What it uses of the shared quota now. */
    readonly used: Readonly<Record<string, string>>;
    /** Its waiters charged to this quota, in its queue's order (`position` is in its namespace's queue). */
    readonly items: readonly QueuedReservation[];
  }[];
  /** To a token limited to namespaces (a HierarchicalResourceQuota's parent's): how many waiting namespaces outside its scope were left out. */
  readonly namespacesWithheld?: number;
}
