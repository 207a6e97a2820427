/**
 * The Kubernetes object shapes the domain reads, as they arrive in JSON (quantities are
 * strings here; they are parsed where they are used). Only the fields the quota and
 * LimitRange logic looks at are typed; everything else passes through untouched.
 */
export type RawQuantities = Readonly<Record<string, string>>;

export interface ObjectMeta {
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta;
  readonly [field: string]: unknown;
}

export interface ResourceRequirements {
  readonly limits?: RawQuantities;
  readonly requests?: RawQuantities;
}

export interface Container {
  readonly name: string;
  readonly image?: string;
  readonly resources?: ResourceRequirements;
  /** `Always` on an init container makes it a restartable sidecar. */
  readonly restartPolicy?: string;
  readonly [field: string]: unknown;
}

export interface PodAffinityTerm {
  readonly namespaces?: readonly string[];
  readonly namespaceSelector?: unknown;
  readonly [field: string]: unknown;
}

export interface PodSpec {
  readonly containers?: readonly Container[];
  readonly initContainers?: readonly Container[];
  readonly overhead?: RawQuantities;
  /** Pod-level resources (PodLevelResources feature). */
  readonly resources?: ResourceRequirements;
  readonly activeDeadlineSeconds?: number;
  readonly priorityClassName?: string;
  readonly restartPolicy?: string;
  readonly affinity?: {
    readonly podAffinity?: {
      readonly requiredDuringSchedulingIgnoredDuringExecution?: readonly PodAffinityTerm[];
      readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly { readonly podAffinityTerm?: PodAffinityTerm }[];
    };
    readonly podAntiAffinity?: {
      readonly requiredDuringSchedulingIgnoredDuringExecution?: readonly PodAffinityTerm[];
      readonly preferredDuringSchedulingIgnoredDuringExecution?: readonly { readonly podAffinityTerm?: PodAffinityTerm }[];
    };
    readonly [field: string]: unknown;
  };
  readonly [field: string]: unknown;
}

export interface Pod extends KubeObject {
  readonly spec?: PodSpec;
  readonly status?: { readonly phase?: string; readonly [field: string]: unknown };
}

export interface ServicePort {
  readonly nodePort?: number;
  readonly port?: number;
  readonly [field: string]: unknown;
}

export interface Service extends KubeObject {
  readonly spec?: {
    readonly type?: string;
    readonly ports?: readonly ServicePort[];
    readonly [field: string]: unknown;
  };
}

export interface PersistentVolumeClaim extends KubeObject {
  readonly spec?: {
    readonly storageClassName?: string | null;
    readonly resources?: ResourceRequirements;
    readonly [field: string]: unknown;
  };
  readonly status?: { readonly allocatedResources?: RawQuantities; readonly [field: string]: unknown };
}

export interface ScopedResourceSelectorRequirement {
  readonly scopeName: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

export interface ResourceQuotaSpec {
  readonly hard?: RawQuantities;
  readonly scopes?: readonly string[];
  readonly scopeSelector?: { readonly matchExpressions?: readonly ScopedResourceSelectorRequirement[] };
}

export interface ResourceQuota extends KubeObject {
  readonly spec?: ResourceQuotaSpec;
  readonly status?: { readonly hard?: RawQuantities; readonly used?: RawQuantities };
}

export interface LimitRangeItem {
  readonly type: string;
  readonly max?: RawQuantities;
  readonly min?: RawQuantities;
  readonly default?: RawQuantities;
  readonly defaultRequest?: RawQuantities;
  readonly maxLimitRequestRatio?: RawQuantities;
}

export interface LimitRange extends KubeObject {
  readonly spec?: { readonly limits?: readonly LimitRangeItem[] };
}

/** The group/resource an admission request is about (`AdmissionRequest.resource`). */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** Kubernetes' LabelSelector (meta/v1); selectors/label-selector.ts validates and matches it. */
export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  readonly values?: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}
