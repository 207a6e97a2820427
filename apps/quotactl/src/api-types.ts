/**
 * The shapes of the service's answers that quotactl reads (docs/api.md; the admission API's
 * controllers and libs/ledger's views). Declared here rather than imported: an app may not
 * import another, and the CLI must cope with a server of another version, so every field is
 * read defensively.
 */

type Quantities = Readonly<Record<string, string>>;

export interface UsageAnswer {
  readonly namespace?: string;
  readonly version?: number;
  readonly position?: string;
  readonly at?: string;
  readonly quotas?: ReadonlyArray<{ readonly name: string; readonly hard?: Quantities; readonly used?: Quantities }>;
}

/** A ClusterResourceQuota's or HierarchicalResourceQuota's usage, now or at an instant. */
export interface SharedUsageAnswer {
  readonly key?: string;
  readonly at?: string;
  readonly defined?: boolean;
  readonly hard?: Quantities;
  readonly used?: Quantities;
  readonly namespaces?: ReadonlyArray<{ readonly namespace: string; readonly used?: Quantities }>;
}

export interface EventView {
  readonly position: string;
  readonly version?: number;
  readonly type: string;
  readonly time: string;
  readonly actor?: string;
  readonly requestId?: string;
  readonly data?: unknown;
}

export interface Page<T> {
  readonly items?: readonly T[];
  readonly next?: string;
}

export interface DecisionView {
  readonly id?: string;
  readonly time: string;
  readonly source?: string;
  readonly operation?: string;
  readonly resource?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly requester?: string;
  readonly onBehalfOf?: string;
  readonly dryRun?: boolean;
  readonly allowed: boolean;
  readonly result?: {
    readonly message?: string;
    readonly stage?: string;
    readonly reservationId?: string;
    readonly charged?: Quantities;
  };
}

/** 201 reserved, or 200 for a dry run or a request that charges nothing (no id then). */
export interface ReserveAnswer {
  readonly id?: string;
  readonly namespace?: string;
  readonly state?: string;
  readonly dryRun?: boolean;
  readonly charged?: Quantities;
  readonly expiresAt?: string;
}

export interface ReservationView {
  readonly id: string;
  readonly state?: string;
  readonly releaseReason?: string;
}

/** Kubernetes' Status, the body of every error. */
export interface KubeStatus {
  readonly kind: 'Status';
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export function isStatus(body: unknown): body is KubeStatus {
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'Status';
}
