import type { TerminationReason } from '../events/events.js';
import type { GroupResource, KubeObject, Operation, ScopedResourceSelectorRequirement } from '../kube/types.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { ScopeFacts } from '../scopes/facts.js';

/** What usage may need beyond the object itself. */
export interface UsageOptions {
  /**
   * The current time in epoch milliseconds. Kubernetes stops charging a pod's compute
   * resources once its deletion grace period has run out; without `now` that never happens.
   */
  readonly now?: number;
  /**
   * Measure the object as though it were still alive: its end of life (a terminal pod phase, a
   * deletion grace period run out) is not applied. Admission measures this way: that an object
   * reached its end is learnt only from what the cluster holds (the reconciler's listing), never
   * from a request's word for it (a resize review claiming `phase: Succeeded` erased a
   * running pod's usage).
   */
  readonly asLive?: boolean;
  /**
   * The object as the API server stored it (the reconciler's listing), not as a request asks: it
   * is decoded no more strictly than the API server decoded it. The ledger's own bounds on what a
   * request may make it read and record (a string's length, the resource names of one object)
   * are not applied; what Kubernetes itself refuses (a quantity that does not parse) still is.
   */
  readonly stored?: boolean;
  /**
   * Never measure below what the object's spec asks. Kubernetes counts a pod whose resize its
   * kubelet found Infeasible at what the node holds only; but the kubelet may apply it yet, and no
   * review would tell the ledger when. The ledger measures this way (admission and the listing),
   * so that what it charges covers every state the object may be in (namespace/stored.ts).
   */
  readonly specFloor?: boolean;
}

/**
 * How one kind of object is charged against quota: the domain's counterpart of Kubernetes'
 * `quota.Evaluator` (k8s.io/apiserver/pkg/quota/v1). Pure: objects in, resource lists out.
 */
export interface UsageEvaluator {
  readonly groupResource: GroupResource;
  /**
   * Whether an admission operation on this kind is charged at all (e.g. pods: CREATE).
   * Some answers depend on the objects (a pod UPDATE is charged only when it changes the
   * Terminating scope; a PVC status UPDATE needs both objects): pass them when known.
   */
  handles(operation: Operation, subresource?: string, object?: KubeObject, oldObject?: KubeObject): boolean;
  /** The quota resource names, out of `input`, that this evaluator charges. */
  matchingResources(input: readonly string[]): string[];
  /**
   * What every scope this kind supports evaluates to for the object. Stored with each
   * reservation, so that quotas defined later match it exactly as admission would.
   */
  scopeFacts(object: KubeObject, options?: UsageOptions): ScopeFacts;
  /** The scope requirements, out of `scopes`, that the object satisfies (via `scopeFacts`). */
  matchingScopes(object: KubeObject, scopes: readonly ScopedResourceSelectorRequirement[]): ScopedResourceSelectorRequirement[];
  /** The limited scopes that no matched quota covers (admission configuration `limitedResources`). */
  uncoveredQuotaScopes(
    limitedScopes: readonly ScopedResourceSelectorRequirement[],
    matchedQuotaScopes: readonly ScopedResourceSelectorRequirement[],
  ): ScopedResourceSelectorRequirement[];
  /**
   * The must-specify rule: the names out of `required` that the object must set but does
   * not (e.g. a pod without `requests.cpu` under a `requests.cpu` quota). Empty when satisfied.
   */
  constraints(required: readonly string[], object: KubeObject): string[];
  /**
   * The same rule as Kubernetes words its error (e.g. `must specify cpu for: app; memory
   * for: app`), or undefined when satisfied. Absent where the rule never applies.
   */
  constraintError?(required: readonly string[], object: KubeObject): string | undefined;
  /** What the object consumes, keyed by quota resource name. Throws DomainError on bad input. */
  usage(object: KubeObject, options?: UsageOptions): ResourceList;
  /**
   * Why the object, although it still exists, is at the end of its life and charged less
   * than while it lived (a pod Succeeded, Failed or past its deletion grace period: only its
   * object count), or undefined. Absent for kinds whose charge never changes that way.
   */
  endOfLife?(object: KubeObject, options?: UsageOptions): TerminationReason | undefined;
}
