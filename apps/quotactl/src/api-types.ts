import type { DecisionView as ApiDecisionView, KubeStatus } from '@quota/api';
import type { AdmissionResult } from '@quota/domain';

/**
 * The shapes of the service's answers that quotactl reads (docs/api.md). The contract's own
 * come from @quota/api, as the server builds them; these few are read as partial answers, and
 * the CLI must cope with a server of another version, so every field is read defensively.
 */
export type { EventView, KubeStatus, NamespaceQueue, Page, QueuedAnswer, QueuedReservation, WaitingFor } from '@quota/api';

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

/** A decision as the audit API lists it, read defensively: only its time and whether it was allowed are sure. */
export type DecisionView = Partial<ApiDecisionView<Partial<AdmissionResult>>> & Pick<ApiDecisionView<AdmissionResult>, 'time' | 'allowed'>;

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

export function isStatus(body: unknown): body is KubeStatus {
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'Status';
}
