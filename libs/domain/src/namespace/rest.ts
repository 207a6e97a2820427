import type { Container, GroupResource, Pod } from '../kube/types.js';
import { CHARGED_KINDS } from '../kube/kinds.js';
import type { ExceededResource } from '../quota/denial.js';
import { forbiddenMessage } from '../quota/denial.js';
import { quotaNamed, type QuotaCharge } from '../quota/check.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { quotaScopeRequirements } from '../scopes/facts.js';
import type { AdmissionDecision, AdmissionView } from './admission-decision.js';

/**
 * A REST reservation of a plain resource list (no object): it has no scopes, so it is
 * checked against and charged to the quotas without scope requirements, on the resources
 * each limits. Quotas in name order; the first that would be exceeded is reported.
 */
export interface ResourceListRequest {
  readonly namespace: string;
  readonly groupResource: GroupResource;
  readonly name?: string;
  readonly kind?: string;
  readonly resources: ResourceList;
  readonly reservationId: string;
  readonly now: number;
  readonly expiresAt?: number;
}

export function decideResources(command: ResourceListRequest, view: AdmissionView): AdmissionDecision {
  const name = command.name ?? '';
  const negative = Resources.negativeKeys(command.resources);
  if (negative.length > 0) {
    const denial = { kind: 'NegativeUsage', resources: negative } as const;
    return { allowed: false, code: 403, stage: 'ResourceQuota', denial, message: forbiddenMessage(command.groupResource, name, denial) };
  }
  const charges: QuotaCharge[] = [];
  const quotas = [...view.quotas].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const quota of quotas) {
    if (quotaScopeRequirements(quota.spec).length > 0) continue;
    const hard = Resources.resourceList(quota.spec.hard ?? {});
    const delta = Resources.withoutZeros(Resources.mask(command.resources, Object.keys(hard)));
    if (Object.keys(delta).length === 0) continue;
    // No usage figure (the namespace awaits its first count): refused, as an object would be.
    const unknown = Object.keys(delta).filter((resource) => !Resources.has(quota.used, resource));
    if (unknown.length > 0) {
      // Named as an object's denial names it (a shared quota by kind and name, not by its key).
      const denial = { kind: 'StatusUnknown', ...quotaNamed(quota), resources: unknown.sort() } as const;
      return { allowed: false, code: 403, stage: 'ResourceQuota', denial, message: forbiddenMessage(command.groupResource, name, denial) };
    }
    const used = Resources.add(Resources.mask(quota.used, Object.keys(hard)), delta);
    const exceeded: ExceededResource[] = [];
    for (const resource of Object.keys(delta).sort()) {
      const after = Resources.get(used, resource);
      const limit = Resources.get(hard, resource);
      if (after && limit && after.cmp(limit) > 0) {
        // A quota's usage has an entry per hard resource; zero keeps the message whole if not.
        const zero = limit.sub(limit);
        exceeded.push({
          resource,
          requested: Resources.get(delta, resource) ?? zero,
          used: Resources.get(quota.used, resource) ?? zero,
          hard: limit,
        });
      }
    }
    if (exceeded.length > 0) {
      // Named as an object's denial names it (a shared quota by kind and name, not by its key),
      // so its message, details.denial and the shared quota's series markers agree.
      const denial = { kind: 'Exceeded', ...quotaNamed(quota), resources: exceeded } as const;
      return { allowed: false, code: 403, stage: 'ResourceQuota', denial, message: forbiddenMessage(command.groupResource, name, denial) };
    }
    charges.push({ quota: quota.name, delta, used });
  }
  return {
    allowed: true,
    patch: [],
    charges,
    reservation: {
      type: 'Reserved',
      data: {
        reservationId: command.reservationId,
        object: {
          group: command.groupResource.group,
          resource: command.groupResource.resource,
          ...(command.kind ? { kind: command.kind } : {}),
          ...(command.name ? { name: command.name } : {}),
        },
        operation: 'CREATE',
        charged: Resources.canonicalResourceList(command.resources),
        scopeFacts: {},
        ...(command.expiresAt === undefined ? {} : { expiresAt: new Date(command.expiresAt).toISOString() }),
        // A resource list comes only through REST.
        source: 'rest',
      },
    },
  };
}

/**
 * The part of the API server's Pod defaulting (SetDefaults_Pod) that quota depends on: a
 * container that sets a limit but no request for a resource gets the limit as its request.
 * A REST client sends a raw object that never went through the API server, so the REST path
 * applies this before charging it (the webhook sees objects already defaulted).
 */
export function defaultPodForAdmission(pod: Pod): Pod {
  const withRequests = (container: Container): Container => {
    const limits = container.resources?.limits;
    if (!limits) return container;
    const requests = { ...(container.resources?.requests ?? {}) };
    let changed = false;
    for (const [name, value] of Object.entries(limits)) {
      if (requests[name] === undefined) {
        requests[name] = value;
        changed = true;
      }
    }
    return changed ? { ...container, resources: { ...container.resources, requests } } : container;
  };
  if (!pod.spec) return pod;
  return {
    ...pod,
    spec: {
      ...pod.spec,
      ...(pod.spec.containers ? { containers: pod.spec.containers.map(withRequests) } : {}),
      ...(pod.spec.initContainers ? { initContainers: pod.spec.initContainers.map(withRequests) } : {}),
    },
  };
}

const KINDS: Readonly<Record<string, GroupResource>> = Object.fromEntries(CHARGED_KINDS.map((k) => [k.kind, k.groupResource]));

/** The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → the core group ''). */
function groupOfApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * The resource of a well-known kind (what a REST caller names in `kind`); undefined for
 * others, which must name their resource (`plural.group`) instead. An `apiVersion` from
 * another group than the kind's is a different kind of the same name (a CRD `Job` in
 * `example.com/v1` is not `batch` Jobs), so it is not guessed either.
 */
export function groupResourceForKind(kind: string, apiVersion?: string): GroupResource | undefined {
  if (!Object.prototype.hasOwnProperty.call(KINDS, kind)) return undefined;
  const known = KINDS[kind];
  if (!known || (apiVersion !== undefined && groupOfApiVersion(apiVersion) !== known.group)) return undefined;
  return known;
}
