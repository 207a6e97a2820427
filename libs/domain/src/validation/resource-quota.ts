import { type RawQuantities, type ResourceQuota, type ResourceQuotaSpec, type ScopedResourceSelectorRequirement } from '../kube/types.js';
import { type QuantityEntries, StrictDecoder } from './decode.js';
import { type FieldError, child, invalid, invalidObject, json, required } from './field.js';
import { type FullObjectMeta, NAMESPACED_DNS_SUBDOMAIN, decodeObjectMeta, validateObjectMeta } from './object-meta.js';
import { assertDefinitionSize, resourceQuotaSizeErrors } from './sizes.js';
import {
  CONFLICTING_SCOPE_PAIRS,
  EXISTS_ONLY_SCOPES,
  isResourceQuotaScopeValidForResource,
  isStandardQuotaResourceName,
  isStandardResourceQuotaScope,
  validateResourceQuantityValue,
  validateResourceQuotaResourceName,
} from './resource-names.js';

/**
 * ResourceQuota validation on create, as the API server does it: strict decoding, then
 * `ValidateResourceQuota` (pkg/apis/core/validation).
 */

const KIND = 'ResourceQuota';

/** A selector requirement as decoded: absent strings are "", absent `values` stays unset. */
interface Requirement {
  readonly scopeName: string;
  readonly operator: string;
  readonly values: readonly string[] | undefined;
}

export interface DecodedSpec {
  readonly hard: QuantityEntries | undefined;
  /** Unset and empty differ when Kubernetes prints the scopes (`null` vs `[]`). */
  readonly scopes: readonly string[] | undefined;
  readonly scopeSelector: { readonly matchExpressions: readonly Requirement[] | undefined } | undefined;
}

interface DecodedQuota {
  readonly metadata: FullObjectMeta;
  readonly spec: DecodedSpec;
}

function decode(raw: unknown): DecodedQuota {
  const dec = new StrictDecoder(KIND);
  const top = dec.root(raw, ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  dec.typeMeta(top);
  const metadata = decodeObjectMeta(dec, top['metadata'], 'metadata');
  const decoded: DecodedQuota = { metadata, spec: decodeQuotaSpec(dec, top['spec'], 'spec') };
  // Decoded only for its errors: the status itself is discarded on create.
  const status = dec.object(top['status'], 'status', ['hard', 'used']);
  dec.quantities(status?.['hard'], 'status.hard');
  dec.quantities(status?.['used'], 'status.used');
  dec.throwIfInvalid();
  return decoded;
}

/** A ResourceQuotaSpec at `path` (a ResourceQuota's `spec`, a ClusterResourceQuota's `spec.quota`). */
export function decodeQuotaSpec(dec: StrictDecoder, raw: unknown, path: string): DecodedSpec {
  const spec = dec.object(raw, path, ['hard', 'scopes', 'scopeSelector']) ?? {};
  const selectorPath = child(path, 'scopeSelector');
  const selector = dec.object(spec['scopeSelector'], selectorPath, ['matchExpressions']);
  const expressions = selector && dec.array(selector['matchExpressions'], child(selectorPath, 'matchExpressions'));
  const matchExpressions = expressions?.map((item, i): Requirement => {
    const at = `${child(selectorPath, 'matchExpressions')}[${i}]`;
    const r = dec.object(item, at, ['scopeName', 'operator', 'values']) ?? {};
    return {
      scopeName: dec.string(r['scopeName'], child(at, 'scopeName')) ?? '',
      operator: dec.string(r['operator'], child(at, 'operator')) ?? '',
      values: dec.stringArray(r['values'], child(at, 'values')),
    };
  });
  return {
    hard: dec.quantities(spec['hard'], child(path, 'hard')),
    scopes: dec.stringArray(spec['scopes'], child(path, 'scopes')),
    scopeSelector: selector && { matchExpressions },
  };
}

/** `validateResourceQuotaScopes`: known scopes, each fitting every standard hard resource, no conflicts. */
function validateScopes(spec: DecodedSpec, hardNames: readonly string[], path: string): FieldError[] {
  const scopes = spec.scopes ?? [];
  if (scopes.length === 0) return [];
  const errs: FieldError[] = [];
  const field = child(path, 'scopes');
  for (const scope of scopes) {
    if (!isStandardResourceQuotaScope(scope)) errs.push(invalid(field, json(spec.scopes), 'unsupported scope'));
    for (const name of hardNames) {
      if (isStandardQuotaResourceName(name) && !isResourceQuotaScopeValidForResource(scope, name)) {
        errs.push(invalid(field, json(spec.scopes), 'unsupported scope applied to resource'));
      }
    }
  }
  for (const [a, b] of CONFLICTING_SCOPE_PAIRS) {
    if (scopes.includes(a) && scopes.includes(b)) errs.push(invalid(field, json(spec.scopes), 'conflicting scopes'));
  }
  return errs;
}

const EXISTS_ONLY_MESSAGE =
  "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity";

/** How Kubernetes prints the selector as a bad value: the internal struct, which has no JSON tags. */
function printedSelector(expressions: readonly Requirement[] | undefined): unknown {
  return {
    MatchExpressions: expressions?.map((r) => ({ ScopeName: r.scopeName, Operator: r.operator, Values: r.values ?? null })) ?? null,
  };
}

/**
 * `validateScopedResourceSelectorRequirement`. Kubernetes reports these errors under
 * `spec.scopeSelector.matchExpressions` without the requirement's index; so do we.
 */
function validateScopeSelector(spec: DecodedSpec, hardNames: readonly string[], path: string): FieldError[] {
  if (!spec.scopeSelector) return [];
  const expressions = spec.scopeSelector.matchExpressions ?? [];
  const errs: FieldError[] = [];
  const field = child(path, 'scopeSelector.matchExpressions');
  const seen = new Set<string>();
  for (const req of expressions) {
    if (!isStandardResourceQuotaScope(req.scopeName))
      errs.push(invalid(child(field, 'scopeName'), json(req.scopeName), 'unsupported scope'));
    for (const name of hardNames) {
      if (isStandardQuotaResourceName(name) && !isResourceQuotaScopeValidForResource(req.scopeName, name)) {
        errs.push(invalid(field, json(printedSelector(spec.scopeSelector.matchExpressions)), 'unsupported scope applied to resource'));
      }
    }
    if ((EXISTS_ONLY_SCOPES as readonly string[]).includes(req.scopeName) && req.operator !== 'Exists') {
      errs.push(invalid(child(field, 'operator'), json(req.operator), EXISTS_ONLY_MESSAGE));
    }
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) {
          errs.push(required(child(field, 'values'), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
        }
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length !== 0) {
          errs.push(
            invalid(
              child(field, 'values'),
              json(req.values),
              "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            ),
          );
        }
        break;
      default:
        errs.push(invalid(child(field, 'operator'), json(req.operator), 'not a valid selector operator'));
    }
    seen.add(req.scopeName);
  }
  for (const [a, b] of CONFLICTING_SCOPE_PAIRS) {
    // Kubernetes prints `spec.scopes` as the bad value here, not the selector.
    if (seen.has(a) && seen.has(b)) errs.push(invalid(field, json(spec.scopes ?? null), 'conflicting scopes'));
  }
  return errs;
}

/** Resource names and values of a resource list (`spec.hard`). */
function validateQuotaResourceList(entries: QuantityEntries, path: string): FieldError[] {
  return entries.flatMap(([name, value]) => {
    const field = `${path}[${name}]`;
    return [...validateResourceQuotaResourceName(name, field), ...validateResourceQuantityValue(name, value, field)];
  });
}

function validate(quota: DecodedQuota): FieldError[] {
  return [
    ...validateObjectMeta(quota.metadata, NAMESPACED_DNS_SUBDOMAIN),
    ...validateQuotaSpec(quota.spec, 'spec'),
    // No status checks: on create the API server clears the status before validating
    // (the strategy's PrepareForCreate), so whatever a client sent there is never judged.
  ];
}

/** ValidateResourceQuotaSpec at `path`: the hard list, the scopes, the scope selector. */
export function validateQuotaSpec(spec: DecodedSpec, path: string): FieldError[] {
  const hard = spec.hard ?? [];
  // Kubernetes walks the hard names as a sorted set for the scope checks.
  const hardNames = [...new Set(hard.map(([name]) => name))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return [
    ...validateQuotaResourceList(hard, child(path, 'hard')),
    ...validateScopes(spec, hardNames, path),
    ...validateScopeSelector(spec, hardNames, path),
  ];
}

const raw = (entries: QuantityEntries): RawQuantities => Object.fromEntries(entries.map(([name, q]) => [name, q.toString()]));

function requirement(r: Requirement): ScopedResourceSelectorRequirement {
  return { scopeName: r.scopeName, operator: r.operator, ...(r.values && { values: r.values }) };
}

/** A decoded spec, typed, with quantities printed as Kubernetes prints them. */
export function toQuotaSpec({ hard, scopes, scopeSelector }: DecodedSpec): ResourceQuotaSpec {
  return {
    ...(hard && { hard: raw(hard) }),
    ...(scopes && { scopes }),
    ...(scopeSelector && {
      scopeSelector: scopeSelector.matchExpressions ? { matchExpressions: scopeSelector.matchExpressions.map(requirement) } : {},
    }),
  };
}

function toResourceQuota(quota: DecodedQuota): ResourceQuota {
  // The status a client sent is dropped, as the API server drops it on create.
  return { apiVersion: 'v1', kind: KIND, metadata: quota.metadata, spec: toQuotaSpec(quota.spec) };
}

/**
 * Validates an untrusted ResourceQuota (parsed JSON) exactly as the API server would on
 * create, and returns it typed, with quantities printed as Kubernetes prints them. A
 * status is still decoded strictly (a malformed one is a 400) but is then discarded.
 * Throws `DomainError('ObjectInvalid')` with one `FieldCause` per problem.
 */
export function validateResourceQuota(obj: unknown): ResourceQuota {
  const quota = decode(obj);
  assertDefinitionSize(KIND, quota.metadata.name ?? '', resourceQuotaSizeErrors(toResourceQuota(quota)));
  const errs = validate(quota);
  if (errs.length > 0) throw invalidObject(KIND, quota.metadata.name ?? '', errs);
  return toResourceQuota(quota);
}
