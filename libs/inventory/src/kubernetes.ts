import { AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { GroupResource } from '@quota/domain';
import { InventoryError, type Inventory, type InventorySource } from './inventory.js';
import { DEFAULT_RESOURCES, knownKindOf, MAX_OBJECTS } from './kinds.js';
import { toInventoryObjects } from './objects.js';

export interface KubernetesInventoryOptions {
  /** A kubeconfig file; without it and without `inCluster`, the default lookup ($KUBECONFIG, ~/.kube/config). */
  readonly kubeconfigPath?: string;
  /** The pod's service account (in a cluster). */
  readonly inCluster?: boolean;
  readonly resources?: readonly GroupResource[];
  /** Objects per page (`limit`); the listing follows `continue` to the end. */
  readonly pageSize?: number;
  readonly timeoutMs?: number;
}

type Page = { metadata?: { _continue?: string }; items: unknown[] };
type ListPage = (namespace: string, limit: number, token: string | undefined) => Promise<Page>;

/**
 * Lists objects through the Kubernetes API with @kubernetes/client-node: one paged list per
 * covered resource (list responses omit each item's apiVersion and kind; they are filled in).
 * Needs RBAC `list` on those resources in the namespaces it reconciles.
 */
export function createKubernetesInventory(options: KubernetesInventoryOptions = {}): InventorySource {
  const config = new KubeConfig();
  if (options.inCluster) config.loadFromCluster();
  else if (options.kubeconfigPath) config.loadFromFile(options.kubeconfigPath);
  else config.loadFromDefault();
  const core = config.makeApiClient(CoreV1Api);
  const apps = config.makeApiClient(AppsV1Api);
  const batch = config.makeApiClient(BatchV1Api);
  const listers: Record<string, ListPage> = {
    'pods.': (namespace, limit, token) => core.listNamespacedPod({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'persistentvolumeclaims.': (namespace, limit, token) => core.listNamespacedPersistentVolumeClaim({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'services.': (namespace, limit, token) => core.listNamespacedService({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'configmaps.': (namespace, limit, token) => core.listNamespacedConfigMap({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'secrets.': (namespace, limit, token) => core.listNamespacedSecret({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'replicationcontrollers.': (namespace, limit, token) => core.listNamespacedReplicationController({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'deployments.apps': (namespace, limit, token) => apps.listNamespacedDeployment({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'replicasets.apps': (namespace, limit, token) => apps.listNamespacedReplicaSet({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'statefulsets.apps': (namespace, limit, token) => apps.listNamespacedStatefulSet({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'daemonsets.apps': (namespace, limit, token) => apps.listNamespacedDaemonSet({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'jobs.batch': (namespace, limit, token) => batch.listNamespacedJob({ namespace, limit, ...(token ? { _continue: token } : {}) }),
    'cronjobs.batch': (namespace, limit, token) => batch.listNamespacedCronJob({ namespace, limit, ...(token ? { _continue: token } : {}) }),
  };
  const covers = options.resources ?? DEFAULT_RESOURCES;
  for (const resource of covers) {
    if (!listers[`${resource.resource}.${resource.group}`]) throw new Error(`the kubernetes inventory cannot list ${resource.resource}.${resource.group}`);
  }
  const pageSize = options.pageSize ?? 500;
  const timeoutMs = options.timeoutMs ?? 10_000;

  async function listAll(namespace: string, resource: GroupResource): Promise<unknown[]> {
    const known = knownKindOf(resource);
    const lister = listers[`${resource.resource}.${resource.group}`];
    if (!known || !lister) return [];
    const items: unknown[] = [];
    let token: string | undefined;
    do {
      const page = await lister(namespace, pageSize, token);
      // Items come back as model classes (dates as Date): plain JSON is what quota evaluates.
      for (const item of page.items) items.push({ ...(JSON.parse(JSON.stringify(item)) as object), apiVersion: known.apiVersion, kind: known.kind });
      if (items.length > MAX_OBJECTS) throw new InventoryError(`kubernetes: more than ${MAX_OBJECTS} ${resource.resource} in namespace ${namespace}`, 'kubernetes');
      token = page.metadata?._continue || undefined;
    } while (token);
    return items;
  }

  return {
    kind: 'kubernetes',
    covers,
    async list(namespace: string): Promise<Inventory> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new InventoryError(`kubernetes: listing namespace ${namespace} took longer than ${timeoutMs} ms`, 'kubernetes')), timeoutMs);
      });
      try {
        const lists = await Promise.race([Promise.all(covers.map((resource) => listAll(namespace, resource))), timeout]);
        return { namespace, covers, objects: toInventoryObjects('kubernetes', namespace, lists.flat(), covers) };
      } catch (error) {
        if (error instanceof InventoryError) throw error;
        const status = (error as { code?: number }).code;
        throw new InventoryError(`kubernetes: listing namespace ${namespace} failed${status ? ` (HTTP ${status})` : ''}: ${(error as Error).message.slice(0, 300)}`, 'kubernetes', { cause: error });
      } finally {
        clearTimeout(timer);
      }
    },
    close: async () => undefined,
  };
}
