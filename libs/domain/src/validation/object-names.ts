import { exceedsBytes, quoteCut } from './field.js';
import { isDNS1123Label, isDNS1123Subdomain, nameIsDNS1035Label, nameIsDNSLabel, nameIsDNSSubdomain, nameIsPathSegment } from './names.js';
import type { GroupResource } from '../kube/types.js';

/**
 * The names an admission stores: every decision records the object's name, kind and
 * resource, and a reservation its name and uid, in append-only tables read back by every audit
 * page. Kubernetes bounds each of them, and so does the ledger, on every route, before anything
 * reads the object: a 3 MB `metadata.name` was stored ten times by a read-only auditor's what-ifs
 * and then killed each API that read it back.
 */

/** `ValidateNameFunc`: the problems with a name (`prefix`: a generateName, which a suffix completes). */
export type NameRule = (name: string, prefix: boolean) => string[];

/** The longest `metadata.uid` accepted (an API server's uid is a 36-character UUID; the AdmissionReview uid's bound). */
export const OBJECT_UID_MAX_BYTES = 128;

/**
 * The name rule Kubernetes applies to objects of a resource: a Service's name is a DNS-1035
 * label and a Namespace's a DNS-1123 label (both at most 63), RBAC's roles and bindings are path
 * segments (`system:controller:…`), and every other kind, custom resources included, a DNS-1123
 * subdomain (at most 253).
 */
export function nameRuleFor(groupResource: GroupResource): NameRule {
  const { group, resource } = groupResource;
  if (group === '' && resource === 'services') return nameIsDNS1035Label;
  if (group === '' && resource === 'namespaces') return nameIsDNSLabel;
  if (group === 'rbac.authorization.k8s.io') return nameIsPathSegment;
  return nameIsDNSSubdomain;
}

export interface NameProblem {
  readonly field: string;
  readonly message: string;
}

/** The first problem with a name under a rule, as a field error says it: the value (cut) and what is wrong. */
export function nameProblem(rule: NameRule, value: string, field: string, prefix = false): NameProblem | undefined {
  const problems = rule(value, prefix);
  return problems.length === 0 ? undefined : { field, message: `Invalid value: ${quoteCut(value)}: ${problems.join('; ')}` };
}

/** A namespace: a DNS-1123 label, as Kubernetes requires of every namespace name. */
export function namespaceProblem(value: string, field: string): NameProblem | undefined {
  return nameProblem((name) => isDNS1123Label(name), value, field);
}

/** An API group (`apps`, `example.com`; '' is the core group): a DNS-1123 subdomain. */
export function groupProblem(value: string, field: string): NameProblem | undefined {
  return value === '' ? undefined : nameProblem((name) => isDNS1123Subdomain(name), value, field);
}

/** A plural resource, a version or a subresource (`pods`, `v1beta1`, `status`): a DNS-1123 label. */
export function labelProblem(value: string, field: string): NameProblem | undefined {
  return nameProblem((name) => isDNS1123Label(name), value, field);
}

/** A kind (`Pod`, `CronTab`): a CamelCase DNS-1035 label of at most 63 characters, as a CRD's kind. */
export function kindProblem(value: string, field: string): NameProblem | undefined {
  if (exceedsBytes(value, 63)) return { field, message: `Invalid value: ${quoteCut(value)}: must be no more than 63 characters` };
  if (!/^[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?$/.test(value)) {
    return {
      field,
      message: `Invalid value: ${quoteCut(value)}: a kind must start with a letter and consist of letters, digits or '-' (e.g. 'Pod', 'CronTab')`,
    };
  }
  return undefined;
}

/** A plain string the ledger records (a uid, a user name): at most `max` bytes. */
export function tooLongProblem(value: string, field: string, max: number): NameProblem | undefined {
  return exceedsBytes(value, max)
    ? { field, message: `Too long: may not be more than ${max} bytes (it has ${value.length} characters)` }
    : undefined;
}

/**
 * `metadata.name`, `generateName`, `namespace` and `uid` of an object admitted as `groupResource`:
 * the first problem, or undefined. (Empty values are left to the rest of admission.)
 */
export function metadataNameProblem(
  groupResource: GroupResource,
  metadata: Readonly<Record<string, unknown>>,
  path: string,
): NameProblem | undefined {
  const rule = nameRuleFor(groupResource);
  const text = (key: string): string => (typeof metadata[key] === 'string' ? (metadata[key] as string) : '');
  const name = text('name');
  const generateName = text('generateName');
  const namespace = text('namespace');
  return (
    (name === '' ? undefined : nameProblem(rule, name, `${path}.name`)) ??
    (generateName === '' ? undefined : nameProblem(rule, generateName, `${path}.generateName`, true)) ??
    (namespace === '' ? undefined : namespaceProblem(namespace, `${path}.namespace`)) ??
    tooLongProblem(text('uid'), `${path}.uid`, OBJECT_UID_MAX_BYTES)
  );
}
