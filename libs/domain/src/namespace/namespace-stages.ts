import type { GroupResource, Operation } from '../kube/types.js';
import { checkQuota } from '../quota/resource-quota-plugin.js';
import { admissionObjectName } from '../quota/denial.js';
import { quotaDenied } from './admission-decision.js';
import { resultOf } from './admission-answer.js';
import { refusal, type AdmissionResult } from './answers.js';
import type { AdmissionAnswer, AdmitObject, AdmitResources, Decided } from './commands.js';
import type { NamespaceFacts } from './facts.js';
import { alwaysDenyRefusal, namespaceLifecycleRefusal, pluginEnabled, type AdmissionPlugin } from './plugins.js';

/**
 * The admission stages that decide on the namespace, before anything is checked against what it
 * holds: NamespaceLifecycle first, then AlwaysDeny (both mutating plugins, so before any
 * validation), each only when enabled (`command.plugins`); and where the ledger manages nothing,
 * the answer there (admitted uncharged, unless the caller needs the namespace managed or a
 * limited resource needs a quota).
 */

type Admission = AdmitObject | AdmitResources;

/** The namespace's answer to an admission, or undefined: it goes on to LimitRanger and ResourceQuota (admit.ts). */
export function namespaceStages(command: Admission, facts: NamespaceFacts): Decided<AdmissionAnswer> | undefined {
  const managed = facts.known && !facts.state.objectOnly;
  const target = targetOf(command, facts.namespace);
  // A review comes from the kube-apiserver, whose own NamespaceLifecycle has already refused new
  // content in a terminating namespace: the ledger's record of a deletion only lags behind it (a
  // namespace deleted and created again under the same name is recorded when read back), so it
  // decides for REST callers alone.
  const lifecycle = command.source === 'webhook' ? undefined : namespaceLifecycleRefusal(command.plugins, target, facts.state);
  if (lifecycle) return refusedBy('NamespaceLifecycle', lifecycle, command, managed);
  if (!managed && command.requireKnownNamespace) {
    const message = `namespaces "${facts.namespace}" not found: define a ResourceQuota or LimitRange in it first`;
    return { events: [], answer: refusal('NamespaceNotFound', message, 'namespaces', facts.namespace) };
  }
  const denied = alwaysDenyRefusal(command.plugins, target.resource, target.name);
  if (denied) return refusedBy('AlwaysDeny', denied, command, managed);
  // The webhook is sent every namespace's requests; logging them all would let any caller
  // grow the decisions log with names that mean nothing here.
  if (!managed) return { events: [], answer: { kind: 'Unmanaged', result: unmanagedResult(command) } };
  return undefined;
}

interface Target {
  readonly operation: Operation;
  readonly resource: GroupResource;
  readonly name: string;
  readonly namespace: string;
}

/** What a plugin's refusal names: the request's resource, object name, operation and namespace. */
function targetOf(command: Admission, namespace: string): Target {
  if (command.type === 'AdmitResources')
    return { operation: 'CREATE', resource: command.groupResource, name: command.name ?? '', namespace };
  const { request } = command;
  return {
    operation: request.operation,
    resource: request.groupResource,
    name: admissionObjectName(request.object ?? request.oldObject, request.name),
    namespace,
  };
}

/** A refusal by NamespaceLifecycle or AlwaysDeny: logged as a decision where the namespace is managed, answered alone where not. */
function refusedBy(stage: AdmissionPlugin, message: string, command: Admission, managed: boolean): Decided<AdmissionAnswer> {
  const result: AdmissionResult = { allowed: false, code: 403, dryRun: command.dryRun, message, stage };
  return { events: [], answer: managed ? { kind: 'Decided', result } : { kind: 'Unmanaged', result } };
}

/**
 * The answer where the ledger manages nothing: admitted, uncharged, unless `limitedResources`
 * says the object consumes something only a quota may allow (there is none here). Judged as
 * Kubernetes judges it, an UPDATE by its increase over `oldObject`: the ledger holds nothing of
 * this namespace to charge against, and nothing is charged either way.
 */
function unmanagedResult(command: AdmitObject | AdmitResources): AdmissionResult {
  const allowed: AdmissionResult = { allowed: true, code: 200, dryRun: command.dryRun };
  if (command.type !== 'AdmitObject' || !command.limitedResources?.length || !pluginEnabled(command.plugins, 'ResourceQuota'))
    return allowed;
  const { request } = command;
  if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || !request.object) return allowed;
  const quota = checkQuota({
    operation: request.operation,
    groupResource: request.groupResource,
    ...(request.subresource ? { subresource: request.subresource } : {}),
    namespace: request.namespace,
    object: request.object,
    ...(request.oldObject ? { oldObject: request.oldObject } : {}),
    quotas: [],
    limitedResources: command.limitedResources,
  });
  return quota.allowed ? allowed : resultOf(quotaDenied(request, quota.denial), command.dryRun, []);
}
