import type { SharedQuotaRef } from '../shared/shared-quota.js';
import type { JsonPatchOperation } from '../limit-range/json-patch.js';
import type { RawQuantities } from '../kube/types.js';
import type { QuotaDenial } from '../quota/denial.js';
import type { AdmissionPlugin } from './plugins.js';
import type { WaitingForJson } from '../events/events.js';

/**
 * The answers the namespace decider gives, as plain JSON (quantities as canonical strings,
 * times as RFC 3339), so a stored answer can be repeated byte for byte.
 */

/** The JSON form of a quota denial (`details.denial` of a REST 403). */
export interface DenialJson {
  /** Which rule refused: Exceeded, MustSpecify, StatusUnknown, NegativeUsage, ... */
  readonly kind: string;
  readonly quota?: string;
  /** A quota over several namespaces: ClusterResourceQuota or HierarchicalResourceQuota (absent: a ResourceQuota). */
  readonly quotaKind?: string;
  /** A HierarchicalResourceQuota's namespace. */
  readonly quotaNamespace?: string;
  /** Exceeded: the first resource over its limit (the others are in `exceeded`). */
  readonly resource?: string;
  readonly requested?: string;
  readonly used?: string;
  readonly hard?: string;
  readonly exceeded?: readonly { readonly resource: string; readonly requested: string; readonly used?: string; readonly hard: string }[];
  readonly resources?: readonly string[];
}

/** One admission answer, as stored in the decisions log and repeated for a repeated request. */
export interface AdmissionResult {
  readonly allowed: boolean;
  /**
   * 200 allowed; 403 denied; 409 the request contradicts what the ledger holds for its object
   * (a uid of another kind, a different CREATE of a known uid, too many changes pending, a
   * request key reused for another request); 500 where Kubernetes answers an internal error.
   */
  readonly code: 200 | 202 | 400 | 403 | 409 | 429 | 500;
  readonly dryRun: boolean;
  /** Denied: the message as the API server words it. */
  readonly message?: string;
  /** Denied: the admission plugin that refused (kube-apiserver's name for it). */
  readonly stage?: AdmissionPlugin;
  readonly denial?: DenialJson;
  /** Allowed and charged: the reservation (absent when nothing is charged, e.g. DELETE). */
  readonly reservationId?: string;
  /** Allowed: what the reservation charges, canonical. */
  readonly charged?: RawQuantities;
  readonly expiresAt?: string;
  /** Allowed: the LimitRange defaults applied to the object, as a JSONPatch. */
  readonly patch?: readonly JsonPatchOperation[];
  /** Allowed: the charged quotas near their limits, in words (nearLimitWarnings). */
  readonly warnings?: readonly string[];
  /** Code 202: it waits in the queue under `reservationId`: its 1-based position then, its deadline, what it waits for. */
  readonly queued?: { readonly position: number; readonly expiresAt: string; readonly waitingFor: readonly WaitingForJson[] };
}

/**
 * A command the namespace refuses as a whole: nothing is decided (or, for an expired commit,
 * only the release the refusal explains). The edge maps the code to a Kubernetes Status.
 */
export interface Refusal {
  readonly kind: 'Refused';
  readonly code: 'NamespaceNotFound' | 'NotFound' | 'Conflict' | 'Forbidden' | 'Expired';
  readonly message: string;
  /** Kubernetes StatusDetails: the object concerned. */
  readonly details: { readonly kind: string; readonly name: string };
}

export function refusal(code: Refusal['code'], message: string, kind: string, name: string): Refusal {
  return { kind: 'Refused', code, message, details: { kind, name } };
}

export function notFound(resource: string, name: string): Refusal {
  return refusal('NotFound', `${resource} "${name}" not found`, resource, name);
}

function sharedOf(ref: SharedQuotaRef | undefined): Pick<DenialJson, 'quotaKind' | 'quotaNamespace'> {
  if (!ref) return {};
  return { quotaKind: ref.kind, ...(ref.namespace ? { quotaNamespace: ref.namespace } : {}) };
}

export function denialJson(denial: QuotaDenial): DenialJson {
  switch (denial.kind) {
    case 'Exceeded': {
      const exceeded = denial.resources.map((r) => ({
        resource: r.resource,
        requested: r.requested.canonical(),
        ...(r.used ? { used: r.used.canonical() } : {}),
        hard: r.hard.canonical(),
      }));
      const first = exceeded[0];
      return { kind: denial.kind, quota: denial.quota, ...sharedOf(denial.shared), ...(first ?? {}), exceeded };
    }
    case 'MustSpecify':
    case 'StatusUnknown':
      return { kind: denial.kind, quota: denial.quota, ...sharedOf(denial.shared), resources: denial.resources };
    case 'NegativeUsage':
    case 'InsufficientQuotaToConsume':
      return { kind: denial.kind, resources: denial.resources };
    case 'InsufficientQuotaToMatchScopes':
      return { kind: denial.kind, resources: denial.scopes.map((s) => s.scopeName) };
    case 'OldObjectMissing':
      return { kind: denial.kind };
  }
}
