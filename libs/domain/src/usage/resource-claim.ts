import type { GroupResource, KubeObject, Operation } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { field, FieldReader } from './fields.js';
import { objectCountName, unique } from './names.js';
import { UnscopedEvaluator } from './evaluator-base.js';
import { selectFields } from '../kube/field-selection.js';
import { RESOURCE_CLAIM_FIELDS } from '../kube/fields-read.js';
import type { UsageOptions } from './evaluator.js';

/**
 * How DRA resource claims are charged (pkg/quota/v1/evaluator/core/resource_claims.go):
 * one `count/resourceclaims.resource.k8s.io` per claim, and per device class the most
 * devices the claim can be allocated, as `<class>.deviceclass.resource.k8s.io/devices`.
 */

const RESOURCE_CLAIMS: GroupResource = { group: 'resource.k8s.io', resource: 'resourceclaims' };
export const RESOURCE_CLAIM_OBJECT_COUNT_NAME = objectCountName(RESOURCE_CLAIMS);
/** `<device class>` + this suffix is the per-class quota name (core/v1 ResourceClaimsPerClass). */
export const DEVICE_CLASS_DEVICES_SUFFIX = '.deviceclass.resource.k8s.io/devices';
/** An `All` request is charged as the most devices one allocation can hold. */
export const ALLOCATION_RESULTS_MAX_SIZE = 32n;

/** `<class>.deviceclass.resource.k8s.io/devices`. */
export function resourceByDeviceClass(deviceClass: string): string {
  return `${deviceClass}${DEVICE_CLASS_DEVICES_SUFFIX}`;
}

interface DeviceChoice {
  readonly deviceClassName: string;
  readonly allocationMode: string;
  readonly count: number;
}

interface DeviceRequest {
  readonly exactly: DeviceChoice | undefined;
  readonly firstAvailable: readonly DeviceChoice[];
}

export class ResourceClaimEvaluator extends UnscopedEvaluator {
  readonly groupResource = RESOURCE_CLAIMS;

  /** CREATE and UPDATE of the claim itself; never a subresource (its status holds the allocation). */
  handles(operation: Operation, subresource?: string): boolean {
    if ((subresource ?? '') !== '') return false;
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  /** Input order kept, as Kubernetes does here (no sorting). */
  matchingResources(input: readonly string[]): string[] {
    return unique(input.filter((name) => name === RESOURCE_CLAIM_OBJECT_COUNT_NAME || name.endsWith(DEVICE_CLASS_DEVICES_SUFFIX)));
  }

  usage(object: KubeObject, options: UsageOptions = {}): ResourceList {
    const result = new Map<string, Quantity>([[RESOURCE_CLAIM_OBJECT_COUNT_NAME, Quantity.fromInt(1n)]]);
    const charge = (name: string, devices: bigint): void => {
      const current = result.get(name);
      const quantity = Quantity.fromInt(devices);
      result.set(name, current === undefined ? quantity : current.add(quantity));
    };
    for (const request of readRequests(object, options.stored)) {
      if (request.firstAvailable.length > 0) {
        // Any alternative may be the one allocated: charge each class its worst case.
        const worst = new Map<string, bigint>();
        for (const choice of request.firstAvailable) {
          const name = resourceByDeviceClass(choice.deviceClassName);
          const devices = devicesOf(choice);
          // A class whose every alternative needs no device is not charged at all.
          if (devices > (worst.get(name) ?? 0n)) worst.set(name, devices);
        }
        for (const [name, devices] of worst) charge(name, devices);
      } else if (request.exactly !== undefined) {
        charge(resourceByDeviceClass(request.exactly.deviceClassName), devicesOf(request.exactly));
      }
      // Any other request shape is one Kubernetes cannot charge either.
    }
    return Resources.fromEntries(result);
  }
}

/** ExactCount charges its count; All the largest possible allocation; an unknown mode nothing. */
function devicesOf(choice: DeviceChoice): bigint {
  switch (choice.allocationMode) {
    case 'ExactCount':
      return BigInt(choice.count);
    case 'All':
      return ALLOCATION_RESULTS_MAX_SIZE;
    default:
      return 0n;
  }
}

/** Whether a v1beta1 request sets any field of its single choice (hasAnyMainRequestFieldsSet). */
function hasSingleRequestFields(request: Readonly<Record<string, unknown>> | undefined): boolean {
  // Go's zero values: an empty string, a zero count, a nil list or pointer (an empty list is set).
  const set = (name: string): boolean => {
    const value = field(request, name);
    return value !== undefined && value !== null && value !== '' && value !== 0;
  };
  return ['deviceClassName', 'selectors', 'allocationMode', 'count', 'adminAccess', 'tolerations', 'capacity'].some(set);
}

/**
 * `spec.devices.requests`, as resource.k8s.io/v1 shapes them. A v1beta1 request carries its
 * single choice at the top level; Kubernetes converts it to `exactly` (when any of its fields
 * is set) before charging.
 */
function readRequests(object: KubeObject, stored = false): DeviceRequest[] {
  const read = new FieldReader('resourceclaim', stored);
  // Only what admission reads of a claim (kube/fields-read.ts).
  const root = read.object(selectFields(object, RESOURCE_CLAIM_FIELDS), '') ?? {};
  const flat = read.string(field(root, 'apiVersion'), 'apiVersion') === 'resource.k8s.io/v1beta1';
  const devices = read.object(field(read.object(field(root, 'spec'), 'spec'), 'devices'), 'spec.devices');
  const choice = (raw: Readonly<Record<string, unknown>> | undefined, path: string): DeviceChoice => ({
    deviceClassName: read.string(field(raw, 'deviceClassName'), `${path}.deviceClassName`),
    allocationMode: read.string(field(raw, 'allocationMode'), `${path}.allocationMode`),
    count: read.optionalInteger(field(raw, 'count'), `${path}.count`) ?? 0,
  });
  const requests = read.array(field(devices, 'requests'), 'spec.devices.requests').map((raw, i): DeviceRequest => {
    const path = `spec.devices.requests[${i}]`;
    const request = read.object(raw, path);
    const firstAvailable = read
      .array(field(request, 'firstAvailable'), `${path}.firstAvailable`)
      .map((sub, j) => choice(read.object(sub, `${path}.firstAvailable[${j}]`), `${path}.firstAvailable[${j}]`));
    const exactly = read.object(field(request, 'exactly'), `${path}.exactly`);
    let single: DeviceChoice | undefined;
    if (exactly !== undefined) single = choice(exactly, `${path}.exactly`);
    else if (flat && hasSingleRequestFields(request)) single = choice(request, path);
    return { exactly: single, firstAvailable };
  });
  read.done();
  return requests;
}
