import { assert } from '../assert.js';
import { nearLimitWarnings, unchargedResourceWarnings } from '../quota/warnings.js';
import * as Resources from '../resources/resource-list.js';
import type { AdmissionDecision } from './admission-decision.js';
import { denialJson, type AdmissionResult } from './answers.js';
import type { AdmissionAnswer, AdmitObject, AdmitResources } from './commands.js';
import type { NamespaceFacts } from './facts.js';
import { pluginEnabled } from './plugins.js';

/**
 * What an admission answers, around the decision (admit.ts): the request key it is remembered
 * under (a repeat gets the first answer, a reused key a conflict), the answer to give and log for
 * a decision, and the warnings that go with an allowed one.
 */

type Admission = AdmitObject | AdmitResources;

/** The uid an admission is charged against: the object's, or on a DELETE its old object's. */
export function admittedUid(command: Admission): string | undefined {
  if (command.type === 'AdmitResources') return undefined;
  return command.request.object?.metadata?.uid ?? command.request.oldObject?.metadata?.uid;
}

/** The key this admission is remembered under; dry runs are never remembered. */
export function rememberedKey(command: Admission): string | undefined {
  return command.requestKey !== undefined && !command.dryRun ? command.requestKey : undefined;
}

/** The answer given earlier to the admission's request key (its repeat), a conflict for a key reused, else undefined. */
export function earlierAnswer(command: Admission, facts: NamespaceFacts): AdmissionAnswer | undefined {
  const key = rememberedKey(command);
  if (key === undefined) return undefined;
  const earlier = facts.answers.get(key);
  assert(earlier !== undefined, `the answer to request key ${key} was looked up before deciding`);
  if (earlier === null) return undefined;
  // Answers stored before digests were kept answer as they always did.
  if (earlier.digest !== undefined && earlier.digest !== command.requestDigest) {
    return { kind: 'KeyReused', result: keyReused(facts.namespace, key, command.dryRun) };
  }
  return withUncharged({ kind: 'Repeated', result: earlier.result }, command, facts);
}

/** The answer to give (and log) for a decision made now: with its near-limit warnings and, for a resource list, its uncharged names. */
export function decidedAnswer(decision: AdmissionDecision, command: Admission, facts: NamespaceFacts): AdmissionAnswer {
  const warnings =
    decision.allowed && !decision.existing && command.warnAtPercent !== undefined
      ? nearLimitWarnings(decision.charges, facts.state, command.warnAtPercent)
      : [];
  return withUncharged({ kind: 'Decided', result: resultOf(decision, command.dryRun, warnings) }, command, facts);
}

/**
 * An allowed resource list, with a warning for each name it asks for that no quota charges
 * (a typo such as `requests.cpus` or `pod`). Where ResourceQuota admission is off, nothing is
 * ever charged, and nothing is said.
 */
function withUncharged<A extends Extract<AdmissionAnswer, { kind: 'Decided' | 'Repeated' }>>(
  answer: A,
  command: Admission,
  facts: NamespaceFacts,
): A {
  if (command.type !== 'AdmitResources' || !answer.result.allowed || !pluginEnabled(command.plugins, 'ResourceQuota')) return answer;
  const uncharged = unchargedResourceWarnings(facts.namespace, Resources.resourceList(command.resources), facts.state);
  return uncharged.length > 0 ? { ...answer, uncharged } : answer;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The result to give (and log) for a decision. */
export function resultOf(decision: AdmissionDecision, dryRun: boolean, warnings: readonly string[]): AdmissionResult {
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
  const [kind, key] = requestKey.startsWith('review:')
    ? ['the AdmissionReview uid', requestKey.slice(7)]
    : ['the requestId', requestKey.slice(requestKey.indexOf(':') + 1)];
  return {
    allowed: false,
    code: 409,
    dryRun,
    message: `${kind} ${JSON.stringify(key)} was already used in namespace "${namespace}" for a different request; a new request needs a new ${kind === 'the requestId' ? 'requestId' : 'uid'}`,
  };
}
