import { MANAGED_NAMESPACE_LABEL, MANAGED_SINCE_ANNOTATION } from '@quota/domain';
import type { ClusterNamespace } from '@quota/inventory';

/**
 * How long after its label is stored a namespace's listing may be its first count. The
 * kube-apiserver matches a webhook's `namespaceSelector` against the labels in its namespace
 * cache, which a watch fills a moment after the write (milliseconds on a healthy server): a write
 * admitted meanwhile still skips the webhooks, and is stored before a listing begun this long
 * after the label, so that the count adopts it.
 */
export const LABEL_PROPAGATION_MS = 1_000;

/** The Namespaces as the cluster stores them, and the reconciler's one write to them. */
export interface NamespaceLabelApi {
  /** The Namespace now, or null when there is none of that name. */
  read(name: string): Promise<ClusterNamespace | null>;
  /** Sets the label and MANAGED_SINCE_ANNOTATION (`since`, RFC 3339), or removes both (null); 'gone' when there is no such Namespace. */
  mark(name: string, since: string | null): Promise<'patched' | 'gone'>;
}

export interface ManagedLabelsOptions {
  /** The ledger's clock (epoch ms): listings are timed on it, and so is the label. */
  readonly now: () => Promise<number>;
  readonly propagationMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/** When the label was set (epoch ms), or undefined when the Namespace lacks it or says not when. */
export function managedSince(namespace: ClusterNamespace): number | undefined {
  if (namespace.labels?.[MANAGED_NAMESPACE_LABEL] === undefined) return undefined;
  const at = Date.parse(namespace.annotations?.[MANAGED_SINCE_ANNOTATION] ?? '');
  return Number.isFinite(at) ? at : undefined;
}

/**
 * The label quota-ledger.io/managed on the namespaces the ledger manages, and on no other: the
 * webhooks' default `namespaceSelector` sends only those (docs/operations/blast-radius.md).
 *
 * The order that keeps the first count whole: a namespace made managed is sent nothing until its
 * label reaches the kube-apiserver, so what is created there meanwhile is stored unchecked. Its
 * first count must adopt all of it, so it may only be a listing begun after the label has been
 * in place for LABEL_PROPAGATION_MS (`ensure`); until then it awaits, and whatever the webhooks
 * are sent there is refused as `status unknown`. A write after that is sent to the webhooks.
 */
export class ManagedLabels {
  private readonly propagationMs: number;

  constructor(
    private readonly api: NamespaceLabelApi,
    private readonly options: ManagedLabelsOptions,
  ) {
    this.propagationMs = options.propagationMs ?? LABEL_PROPAGATION_MS;
  }

  /**
   * Resolves true once the namespace's label has been in place for the propagation delay (set
   * now when missing, or when it does not say since when: a hand-set label); false, said in the
   * log, when it cannot be (no such Namespace, or the patch refused: RBAC, the admission policy).
   */
  async ensure(namespace: string): Promise<boolean> {
    try {
      const stored = await this.api.read(namespace);
      if (!stored) return false;
      let since = managedSince(stored);
      if (since === undefined) {
        since = await this.options.now();
        if ((await this.api.mark(namespace, new Date(since).toISOString())) === 'gone') return false;
        this.options.log?.('info', 'namespace labelled as managed: the webhooks are sent its writes', {
          namespace,
          label: MANAGED_NAMESPACE_LABEL,
        });
      }
      // Whichever replica set it: the delay runs from the time the label says.
      const wait = Math.min(this.propagationMs, since + this.propagationMs - (await this.options.now()));
      if (wait > 0) await (this.options.sleep ?? sleep)(wait);
      return true;
    } catch (error) {
      this.options.log?.('warn', 'the managed label could not be set: the namespace awaits its first count until it is', {
        namespace,
        label: MANAGED_NAMESPACE_LABEL,
        error: (error as Error).message,
      });
      return false;
    }
  }

  /**
   * The fan-out's pass over every Namespace (`namespaces`, as listed): the label put on each one the
   * ledger manages (`managed`) and lacks it, taken off each one it does not. A namespace is asked
   * again right before and right after its label is taken off (`isManaged`): one made managed in
   * between gets it back at once (the watch adopts what was created in that instant).
   */
  async sweep(
    namespaces: readonly ClusterNamespace[],
    managed: ReadonlySet<string>,
    isManaged: (namespace: string) => Promise<boolean>,
  ): Promise<{ labelled: number; unlabelled: number }> {
    let labelled = 0;
    let unlabelled = 0;
    for (const namespace of namespaces) {
      const has = namespace.labels?.[MANAGED_NAMESPACE_LABEL] !== undefined;
      try {
        if (managed.has(namespace.name) && !has) {
          if ((await this.mark(namespace.name)) === 'patched') labelled++;
        } else if (!managed.has(namespace.name) && has && !(await isManaged(namespace.name))) {
          if ((await this.api.mark(namespace.name, null)) === 'patched') unlabelled++;
          if (await isManaged(namespace.name)) await this.mark(namespace.name);
        }
      } catch (error) {
        this.options.log?.('warn', 'the managed label of a namespace was not brought up to date', {
          namespace: namespace.name,
          error: (error as Error).message,
        });
      }
    }
    if (labelled + unlabelled > 0) this.options.log?.('info', 'managed labels brought up to date', { labelled, unlabelled });
    return { labelled, unlabelled };
  }

  private async mark(namespace: string): Promise<'patched' | 'gone'> {
    return this.api.mark(namespace, new Date(await this.options.now()).toISOString());
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
