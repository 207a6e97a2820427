import {
  forbiddenMessage,
  quotaScopeRequirements,
  Resources,
  type AdmissionDecision,
  type AdmissionView,
  type ExceededResource,
  type GroupResource,
  type QuotaCharge,
  type ResourceList,
} from '@quota/domain';

/**
 * A REST reservation of a plain resource list (no object): it has no scopes, so it is
 * checked against and charged to the quotas without scope requirements, on the resources
 * each limits. Quotas in name order; the first that would be exceeded is reported.
 */
export interface AdmitResources {
  readonly namespace: string;
  readonly groupResource: GroupResource;
  readonly name?: string;
  readonly kind?: string;
  readonly resources: ResourceList;
  readonly reservationId: string;
  readonly now: number;
  readonly expiresAt?: number;
}

export function decideResources(command: AdmitResources, view: AdmissionView): AdmissionDecision {
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
    const used = Resources.add(Resources.mask(quota.used, Object.keys(hard)), delta);
    const exceeded: ExceededResource[] = [];
    for (const resource of Object.keys(delta).sort()) {
      const after = Resources.get(used, resource);
      const limit = Resources.get(hard, resource);
      if (after && limit && after.cmp(limit) > 0) {
        exceeded.push({ resource, requested: Resources.get(delta, resource) ?? limit.sub(limit), used: Resources.get(quota.used, resource), hard: limit });
      }
    }
    if (exceeded.length > 0) {
      const denial = { kind: 'Exceeded', quota: quota.name, resources: exceeded } as const;
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
      },
    },
  };
}
