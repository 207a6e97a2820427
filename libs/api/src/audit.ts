/** An event as the audit API shows it. */
export interface EventView {
  readonly position: string;
  readonly version: number;
  readonly type: string;
  readonly time: string;
  /** The authenticated principal that wrote it. */
  readonly actor: string;
  /** The Kubernetes user it relayed, when trusted (the kube-apiserver's `userInfo`). */
  readonly onBehalfOf?: string;
  readonly requestId?: string;
  readonly data: unknown;
}

/** One page of a list: follow `next` until it is absent. */
export interface Page<T> {
  readonly items: readonly T[];
  /** Pass as `after` for the next page; absent on the last page. */
  readonly next?: string;
}
