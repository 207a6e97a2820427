import { LAST_APPLIED_BY_ANNOTATION, managedByCluster, MANAGED_BY_ANNOTATION, MANAGED_BY_CLUSTER, validateResourceQuota, type QuotaDefinition } from '@quota/domain';
import { LedgerError, type DefinitionQueries, type LedgerCommands } from '@quota/ledger';
import type { LedgerQuotaApi, LedgerQuotaObject, LedgerQuotaStatus } from './ledger-quota-api.js';

/** Annotations of the object never copied into the ledger: ours, and kubectl's copy of the whole object. */
const DROPPED_ANNOTATION = /^quota-ledger\.io\/|^kubectl\.kubernetes\.io\/last-applied-configuration$/;

/** What the sync needs of the ledger: the commands the REST PUT and DELETE run, and the quotas per namespace. */
export type LedgerQuotaLedger = Pick<LedgerCommands, 'putQuota' | 'deleteQuota'> & Pick<DefinitionQueries, 'listQuotas' | 'namespaces'>;

export interface LedgerQuotaSyncOptions {
  /** Who removals are recorded as (the cluster does not say who deleted an object). */
  readonly actor?: string;
  readonly log?: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

export interface LedgerQuotaSyncOutcome {
  /** Quotas defined or changed in the ledger from their object. */
  readonly put: number;
  /** Ledger quotas from the cluster whose object is gone, removed. */
  readonly removed: number;
  /** Objects whose status was written. */
  readonly statuses: number;
  /** Objects the ledger refused (invalid spec): their status says why. */
  readonly refused: number;
}

/**
 * LedgerQuota objects → the ledger, and the ledger's usage → their status. The cluster object is
 * the source of truth of a quota that came from it: each object is put into the ledger through
 * LedgerCommands.putQuota (the REST PUT's command; an unchanged one appends nothing), recorded as
 * made by the newest managedFields entry's manager; a ledger quota marked as from the cluster
 * whose object is gone is removed; status.hard and status.used are the ledger's, written only
 * when they differ. A pass acts only on a complete listing.
 */
export class LedgerQuotaSync {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly ledger: LedgerQuotaLedger,
    private readonly api: LedgerQuotaApi,
    private readonly options: LedgerQuotaSyncOptions = {},
  ) {}

  /** A pass now and every `intervalMs` (never two at once; a failed pass is logged, the next one tries again). */
  start(intervalMs: number): void {
    const pass = (): void => {
      if (this.running) return;
      this.running = this.sync()
        .catch((error: unknown) => this.options.log?.('warn', 'ledger quotas not synced this interval', { error: (error as Error).message }))
        .finally(() => (this.running = undefined));
    };
    pass();
    this.timer = setInterval(pass, intervalMs);
  }

  /** Stops the passes and waits for the one in hand. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  async sync(): Promise<LedgerQuotaSyncOutcome> {
    const objects = await this.api.list();
    // The CRD is not installed: nothing comes from the cluster, and nothing is removed.
    if (!objects) return { put: 0, removed: 0, statuses: 0, refused: 0 };
    const outcome = { put: 0, removed: 0, statuses: 0, refused: 0 };
    for (const object of objects) await this.syncOne(object, outcome);
    outcome.removed = await this.removeOrphans(new Set(objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)));
    if (outcome.put + outcome.removed + outcome.refused > 0) this.options.log?.('info', 'ledger quotas synced from the cluster', { ...outcome });
    return outcome;
  }

  private async syncOne(object: LedgerQuotaObject, outcome: { put: number; statuses: number; refused: number }): Promise<void> {
    const { namespace, name } = object.metadata;
    let status: LedgerQuotaStatus;
    try {
      const result = await this.ledger.putQuota(namespace, definitionOf(object), authorOf(object, this.options.actor));
      if (result.changed) outcome.put++;
      status = { hard: result.view.hard, used: result.view.used, ...generation(object), conditions: [condition(object, 'True', 'Synced', 'the ledger holds this quota')] };
    } catch (error) {
      // An invalid spec (or one the ledger refuses): the ledger keeps what it had, the status says why.
      outcome.refused++;
      const message = (error as Error).message;
      this.options.log?.('warn', 'a LedgerQuota was not put into the ledger', { namespace, name, error: message });
      status = { ...object.status, ...generation(object), conditions: [condition(object, 'False', 'Refused', message)] };
    }
    if (sameStatus(object.status, status)) return;
    const written = await this.api.updateStatus(object, status);
    // A conflict or a deletion since the listing: the next pass sees the object as it is now.
    if (written === 'updated') outcome.statuses++;
  }

  /** Removes one ledger quota; false when another replica's pass removed it first. */
  private async remove(namespace: string, name: string): Promise<boolean> {
    try {
      await this.ledger.deleteQuota(namespace, name, { actor: this.options.actor ?? 'system:reconciler' });
      return true;
    } catch (error) {
      if (error instanceof LedgerError && error.code === 'NotFound') return false;
      throw error;
    }
  }

  private async removeOrphans(present: ReadonlySet<string>): Promise<number> {
    let removed = 0;
    let after: string | undefined;
    for (;;) {
      const namespaces = await this.ledger.namespaces({ ...(after === undefined ? {} : { after }), limit: 500 });
      if (namespaces.length === 0) return removed;
      for (const namespace of namespaces) {
        for (const quota of await this.ledger.listQuotas(namespace)) {
          if (!managedByCluster(quota.definition.metadata) || present.has(`${namespace}/${quota.definition.name}`)) continue;
          if (await this.remove(namespace, quota.definition.name)) removed++;
        }
      }
      after = namespaces.at(-1);
    }
  }
}

/** The object's spec as the ledger's quota definition, validated as the REST PUT validates a ResourceQuota. */
export function definitionOf(object: LedgerQuotaObject): QuotaDefinition {
  const { name, namespace, labels } = object.metadata;
  const quota = validateResourceQuota({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, namespace }, spec: object.spec ?? {} });
  const kept = Object.entries(object.metadata.annotations ?? {}).filter(([key]) => !DROPPED_ANNOTATION.test(key));
  const annotations = { ...Object.fromEntries(kept), [MANAGED_BY_ANNOTATION]: MANAGED_BY_CLUSTER };
  return { name, spec: quota.spec ?? {}, metadata: { ...(labels ? { labels } : {}), annotations } };
}

/**
 * Who changed the object: the user our mutating webhook stamped (LAST_APPLIED_BY_ANNOTATION, from
 * the kube-apiserver's userInfo), recorded as the reconciler acting on their behalf; without it (an
 * object in a namespace the webhook leaves out, or written before it was registered), the manager
 * of the newest managedFields entry of the main resource (`kubectl-client-side-apply`,
 * `argocd-controller`): the client that wrote, not the user, for managedFields name no user.
 */
export function authorOf(object: LedgerQuotaObject, reconciler = 'system:reconciler'): { actor: string; onBehalfOf?: string } {
  const user = object.metadata.annotations?.[LAST_APPLIED_BY_ANNOTATION];
  if (user) return { actor: reconciler, onBehalfOf: user };
  const entries = (object.metadata.managedFields ?? []).filter((e) => e.subresource === undefined || e.subresource === '');
  const newest = entries.reduce<(typeof entries)[number] | undefined>((best, e) => (!best || (e.time ?? '') >= (best.time ?? '') ? e : best), undefined);
  return { actor: `kubernetes:${newest?.manager ?? 'unknown'}` };
}

function generation(object: LedgerQuotaObject): { observedGeneration?: number } {
  return object.metadata.generation === undefined ? {} : { observedGeneration: object.metadata.generation };
}

type Condition = NonNullable<LedgerQuotaStatus['conditions']>[number];

/** The Synced condition; its transition time moves only when its status does. */
function condition(object: LedgerQuotaObject, status: 'True' | 'False', reason: string, message: string): Condition {
  const before = object.status?.conditions?.find((c) => c.type === 'Synced');
  const lastTransitionTime = before?.status === status && before.lastTransitionTime ? before.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { type: 'Synced', status, reason, message: message.slice(0, 1000), lastTransitionTime };
}

function sameStatus(a: LedgerQuotaStatus | undefined, b: LedgerQuotaStatus): boolean {
  const canonical = (s: LedgerQuotaStatus | undefined) =>
    JSON.stringify({
      hard: sorted(s?.hard),
      used: sorted(s?.used),
      observedGeneration: s?.observedGeneration,
      conditions: (s?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message, c.lastTransitionTime]),
    });
  return canonical(a) === canonical(b);
}

function sorted(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([x], [y]) => x.localeCompare(y));
}
