import { assert } from '../assert.js';
import { admissionViewOf, decideAdmission, quotaDenied, type AdmissionDecision } from './admission.js';
import { alwaysDenyRefusal, namespaceLifecycleRefusal, pluginEnabled, type AdmissionPlugin } from './plugins.js';
import { checkQuota } from '../quota/admission.js';
import { admissionObjectName } from '../quota/denial.js';
import { decideResources } from './rest.js';
import { decideWait } from './queue.js';
import type { LedgerEvent } from '../events/events.js';
import type { GroupResource, Operation } from '../kube/types.js';
import * as Resources from '../resources/resource-list.js';
import { denialJson, refusal, type AdmissionResult } from './answers.js';
import { nearLimitWarnings, unchargedResourceWarnings } from '../quota/warnings.js';
import type { AdmissionAnswer, AdmitObject, AdmitResources, Decided } from './commands.js';
import { liveLoadedFor, type NamespaceFacts } from './facts.js';

/**
 * Admission, for an object or a resource list: the request key first (a repeat gets the first
 * answer, a reused key a conflict), then the plugins in kube-apiserver's order — NamespaceLifecycle,
 * AlwaysDeny (both mutating, so before any validation), and on what the ledger holds LimitRanger
 * and ResourceQuota — each only when enabled (`command.plugins`). An unmanaged namespace is
 * admitted uncharged unless the caller needs it managed or a limited resource needs a quota.
 */
export function decideAdmit(command: AdmitObject | AdmitResources, facts: NamespaceFacts): Decided<AdmissionAnswer> {
  const earlier = earlierAnswer(command, facts);
  if (earlier) return { events: [], answer: earlier.kind === 'Repeated' ? withUncharged(earlier, command, facts) : earlier };
  const managed = facts.known && !facts.state.objectOnly;
  // The plugins that decide on the namespace, in kube-apiserver's order: NamespaceLifecycle
  // first; AlwaysDeny, a mutating plugin too, before any validation.
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
  if (!managed) {
    // The webhook is sent every namespace's requests; logging them all would let any caller
    // grow the decisions log with names that mean nothing here.
    return { events: [], answer: { kind: 'Unmanaged', result: unmanagedResult(command) } };
  }
  const decision = command.type === 'AdmitObject' ? admitObject(command, facts) : admitResources(command, facts);
  const waiting = command.type === 'AdmitResources' ? decideWait(command, facts, decision) : undefined;
  if (waiting) return waiting;
  const reserved = decision.allowed && !decision.existing && !command.dryRun ? decision.reservation : undefined;
  const events: LedgerEvent[] = reserved ? [reserved] : [];
  const warnings = decision.allowed && !decision.existing && command.warnAtPercent !== undefined ? nearLimitWarnings(decision.charges, facts.state, command.warnAtPercent) : [];
  return { events, answer: withUncharged({ kind: 'Decided', result: resultOf(decision, command.dryRun, warnings) }, command, facts) };
}

/**
 * An allowed resource list, with a warning for each name it asks for that no quota charges
 * (a typo such as `requests.cpus` or `pod`). Where ResourceQuota admission is off,
 * nothing is ever charged, and nothing is said.
 */
function withUncharged<A extends Extract<AdmissionAnswer, { kind: 'Decided' | 'Repeated' }>>(answer: A, command: AdmitObject | AdmitResources, facts: NamespaceFacts): A {
  if (command.type !== 'AdmitResources' || !answer.result.allowed || !pluginEnabled(command.plugins, 'ResourceQuota')) return answer;
  const uncharged = unchargedResourceWarnings(facts.namespace, Resources.resourceList(command.resources), facts.state);
  return uncharged.length > 0 ? { ...answer, uncharged } : answer;
}

interface Target {
  readonly operation: Operation;
  readonly resource: GroupResource;
  readonly name: string;
  readonly namespace: string;
}

/** What a plugin's refusal names: the request's resource, object name, operation and namespace. */
function targetOf(command: AdmitObject | AdmitResources, namespace: string): Target {
  if (command.type === 'AdmitResources') return { operation: 'CREATE', resource: command.groupResource, name: command.name ?? '', namespace };
  const { request } = command;
  return { operation: request.operation, resource: request.groupResource, name: admissionObjectName(request.object ?? request.oldObject, request.name), namespace };
}

/** A refusal by NamespaceLifecycle or AlwaysDeny: logged as a decision where the namespace is managed, answered alone where not. */
function refusedBy(stage: AdmissionPlugin, message: string, command: AdmitObject | AdmitResources, managed: boolean): Decided<AdmissionAnswer> {
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
  if (command.type !== 'AdmitObject' || !command.limitedResources?.length || !pluginEnabled(command.plugins, 'ResourceQuota')) return allowed;
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

/** The uid an admission is charged against: the object's, or on a DELETE its old object's. */
export function admittedUid(command: AdmitObject | AdmitResources): string | undefined {
  if (command.type === 'AdmitResources') return undefined;
  return command.request.object?.metadata?.uid ?? command.request.oldObject?.metadata?.uid;
}

/** The key this admission is remembered under; dry runs are never remembered. */
export function rememberedKey(command: AdmitObject | AdmitResources): string | undefined {
  return command.requestKey !== undefined && !command.dryRun ? command.requestKey : undefined;
}

function earlierAnswer(command: AdmitObject | AdmitResources, facts: NamespaceFacts): AdmissionAnswer | undefined {
  const key = rememberedKey(command);
  if (key === undefined) return undefined;
  const earlier = facts.answers.get(key);
  assert(earlier !== undefined, `the answer to request key ${key} was looked up before deciding`);
  if (earlier === null) return undefined;
  // Answers stored before digests were kept answer as they always did.
  if (earlier.digest !== undefined && earlier.digest !== command.requestDigest) {
    return { kind: 'KeyReused', result: keyReused(facts.namespace, key, command.dryRun) };
  }
  return { kind: 'Repeated', result: earlier.result };
}

function admitObject(command: AdmitObject, facts: NamespaceFacts): AdmissionDecision {
  const uid = admittedUid(command);
  // What the ledger holds for the object: an UPDATE or a repeated CREATE is charged against it.
  assert(uid === undefined || liveLoadedFor(facts, uid), `the live reservations of ${uid} were loaded before deciding`);
  const expiresAt = command.ttlMs === undefined ? undefined : facts.now + command.ttlMs;
  return decideAdmission(
    {
      request: command.request,
      reservationId: command.reservationId,
      now: facts.now,
      ...(expiresAt === undefined ? {} : { expiresAt }),
      ...(command.limitedResources ? { limitedResources: command.limitedResources } : {}),
      ...(command.plugins ? { plugins: command.plugins } : {}),
      ...(command.source ? { source: command.source } : {}),
    },
    admissionViewOf(facts.state, uid, facts.sharedElsewhere),
  );
}

function admitResources(command: AdmitResources, facts: NamespaceFacts): AdmissionDecision {
  // ResourceQuota disabled: nothing checked, nothing charged, nothing reserved (as for an object).
  if (!pluginEnabled(command.plugins, 'ResourceQuota')) return { allowed: true, patch: [], charges: [] };
  const expiresAt = command.ttlMs === undefined ? undefined : facts.now + command.ttlMs;
  return decideResources(
    {
      namespace: facts.namespace,
      groupResource: command.groupResource,
      ...(command.name ? { name: command.name } : {}),
      ...(command.kind ? { kind: command.kind } : {}),
      resources: Resources.resourceList(command.resources),
      reservationId: command.reservationId,
      now: facts.now,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    },
    admissionViewOf(facts.state, undefined, facts.sharedElsewhere),
  );
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The answer to give (and log) for a decision. */
function resultOf(decision: AdmissionDecision, dryRun: boolean, warnings: readonly string[]): AdmissionResult {
  if (!decision.allowed) {
    return {
      allowed: false,
      code: decision.code,
      dryRun,
      message: decision.message,
      stage: decision.stage,
      ...(decision.denial ? { denial: denialJson(decision.denial) } : {}),
    };
  }
  if (decision.existing) {
    // The same object admitted again (a second webhook call for one create): charged once.
    const live = decision.existing;
    return {
      allowed: true,
      code: 200,
      dryRun,
      reservationId: live.id,
      charged: Resources.canonicalResourceList(live.contribution),
      ...(live.expiresAt === undefined ? {} : { expiresAt: iso(live.expiresAt) }),
    };
  }
  const reservation = decision.reservation;
  return {
    allowed: true,
    code: 200,
    dryRun,
    ...(reservation && !dryRun ? { reservationId: reservation.data.reservationId } : {}),
    ...(reservation ? { charged: reservation.data.charged } : {}),
    ...(reservation?.data.expiresAt ? { expiresAt: reservation.data.expiresAt } : {}),
    ...(decision.patch.length > 0 ? { patch: decision.patch } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/** The answer to an idempotency key sent again with a different request: 409, nothing decided or written. */
function keyReused(namespace: string, requestKey: string, dryRun: boolean): AdmissionResult {
  const [kind, key] = requestKey.startsWith('review:') ? ['the AdmissionReview uid', requestKey.slice(7)] : ['the requestId', requestKey.slice(requestKey.indexOf(':') + 1)];
  return {
    allowed: false,
    code: 409,
    dryRun,
    message: `${kind} ${JSON.stringify(key)} was already used in namespace "${namespace}" for a different request; a new request needs a new ${kind === 'the requestId' ? 'requestId' : 'uid'}`,
  };
}
