type Quantities = Readonly<Record<string, string>>;

/** One sample of a namespace's usage: every quota's hard and used as of `at`. */
export interface UsagePoint {
  readonly at: string;
  /** The stream version in force at `at` (0 before the first event). */
  readonly version: number;
  readonly quotas: readonly { readonly name: string; readonly hard: Quantities; readonly used: Quantities }[];
}

/** Something to mark on a usage chart. */
export type UsageMarker =
  | {
      readonly kind: 'limit';
      readonly at: string;
      readonly version: number;
      readonly quota: string;
      readonly change: 'defined' | 'changed' | 'removed';
      readonly actor: string;
    }
  | {
      readonly kind: 'denial';
      readonly at: string;
      readonly decisionId: string;
      readonly reason: string | null;
      readonly requester: string;
      readonly name: string | null;
      readonly message: string | null;
      /** The quota that refused (absent: none did, e.g. a LimitRange), by name; a shared one with its kind (and namespace). */
      readonly quota?: string;
      readonly quotaKind?: string;
      readonly quotaNamespace?: string;
      /** The resources it refused for (over the limit, or left unspecified): the charts it is drawn on. */
      readonly resources?: readonly string[];
    };

/** Usage sampled at evenly spaced instants over a range, with what happened to the limits and who was denied. */
export interface UsageSeries {
  readonly namespace: string;
  readonly since: string;
  readonly until: string;
  readonly points: readonly UsagePoint[];
  /** Oldest first; at most MARKERS_MAX of each kind (`truncated` says when there were more). */
  readonly markers: readonly UsageMarker[];
  readonly truncated: boolean;
}

/** A shared quota (ClusterResourceQuota, HierarchicalResourceQuota) as it stood at an instant. */
export interface SharedQuotaUsagePoint {
  readonly at: string;
  /** The version of its stream's definition event in force at `at` (0 before the first). */
  readonly version: number;
  /** Whether it existed at `at` (false before its creation and after its removal: no hard, nothing used). */
  readonly defined: boolean;
  /** Canonical. */
  readonly hard: Quantities;
  /** Canonical: over every namespace it covered at `at`, one entry per hard resource. */
  readonly used: Quantities;
}

/** A shared quota's usage sampled over a range, with its limit changes and the denials that named it. */
export interface SharedQuotaUsageSeries {
  readonly key: string;
  readonly since: string;
  readonly until: string;
  readonly points: readonly SharedQuotaUsagePoint[];
  readonly markers: readonly UsageMarker[];
  readonly truncated: boolean;
}
