/** Where an admission came from. */
export type AdmissionSource = 'webhook' | 'rest';

/** What the decisions log records of the request a decision answered. */
export interface DecisionRequest {
  readonly source: AdmissionSource;
  readonly requestKey?: string;
  readonly operation: string;
  /** `pods`, `deployments.apps`, ... */
  readonly resource: string;
  readonly kind?: string;
  readonly name?: string;
  readonly objectUid?: string;
  /** The authenticated principal that asked. */
  readonly requester: string;
  /** The Kubernetes user it asked for, when trusted (the kube-apiserver's `userInfo`). */
  readonly onBehalfOf?: string;
  readonly dryRun: boolean;
}

/** A decision as GET …/decisions lists it; `Result` is the domain's AdmissionResult. */
export interface DecisionView<Result> extends DecisionRequest {
  readonly id: string;
  readonly namespace: string;
  readonly time: string;
  readonly allowed: boolean;
  readonly result: Result;
}
