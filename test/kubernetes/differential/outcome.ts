import type { KubeAnswer } from '../../support/kube-api.js';
import type { ResourceList } from './scenario.js';

/**
 * What is compared after each step: the decision (allowed, or the kind of refusal and the
 * resources it names), and Used per quota, as exact quantities. Written for this test alone
 * (it does not use the product's parser or evaluators: they are what is under test).
 */

export interface Decision {
  readonly allowed: boolean;
  /** For a refusal: QuotaExceeded, QuotaMustSpecify, QuotaStatusUnknown, LimitRange, WebhookFailed, or the Status reason. */
  readonly kind?: string;
  /** The resources a quota refusal names, or the LimitRange's violations, sorted. */
  readonly resources?: readonly string[];
  /** The quota a quota refusal names (Kubernetes picks one of several that refuse; not compared). */
  readonly quota?: string;
  readonly message?: string;
}

const WEBHOOK_PREFIX = /^admission webhook "[^"]+" denied the request: /;

/** The resources of `a=1,b=2` (a refusal's `requested:` list). */
const namesOf = (list: string): string[] =>
  list
    .split(',')
    .map((entry) => entry.split('=')[0]!.trim())
    .filter(Boolean);

/** LimitRanger's violations: one message, or `[a, b]` in Go's map order. */
function limitRangeItems(text: string): string[] | undefined {
  const body = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const items = body.split(/, (?=(?:minimum|maximum) |\S+ max limit to request ratio )/);
  return items.every((item) => /^(minimum|maximum) \S+ usage per |^\S+ max limit to request ratio per /.test(item))
    ? items.sort()
    : undefined;
}

/** The decision an answer of the API server carries. */
export function decisionOf(answer: KubeAnswer): Decision {
  if (answer.status >= 200 && answer.status < 300) return { allowed: true };
  const message = String(answer.body?.message ?? answer.body ?? '');
  if (/failed calling webhook/.test(message)) return { allowed: false, kind: 'WebhookFailed', message };
  const text = message.replace(WEBHOOK_PREFIX, '').replace(/^[a-z]+ "[^"]+" is forbidden: /, '');
  let match = /^exceeded quota: ([^,]+), requested: (\S+), used:/.exec(text);
  if (match) return { allowed: false, kind: 'QuotaExceeded', quota: match[1], resources: namesOf(match[2]!).sort(), message };
  match = /^failed quota: ([^:]+): must specify (.*)$/.exec(text);
  if (match)
    return {
      allowed: false,
      kind: 'QuotaMustSpecify',
      quota: match[1],
      resources: [...match[2]!.matchAll(/([\w./-]+) for: /g)].map((m) => m[1]!).sort(),
      message,
    };
  match = /^status unknown for quota: ([^,]+), resources: (.*)$/.exec(text);
  if (match) return { allowed: false, kind: 'QuotaStatusUnknown', quota: match[1], resources: namesOf(match[2]!).sort(), message };
  const items = limitRangeItems(text);
  if (answer.status === 403 && items) return { allowed: false, kind: 'LimitRange', resources: items, message };
  return { allowed: false, kind: String(answer.body?.reason ?? answer.status), resources: causesOf(answer, text), message };
}

/** A validation error's causes (Go's map order made the message's list order vary), else its text. */
function causesOf(answer: KubeAnswer, text: string): string[] {
  const causes = answer.body?.details?.causes as { field?: string; message?: string }[] | undefined;
  return causes?.length ? causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`).sort() : [text];
}

/** Equal decisions: both allowed, or refused for the same kind naming the same resources. */
export function sameDecision(a: Decision, b: Decision): boolean {
  if (a.allowed !== b.allowed) return false;
  if (a.allowed) return true;
  if (a.kind !== b.kind) return false;
  // Several quotas may refuse one request: Kubernetes names whichever its informer lists first,
  // we name the first by name; each then lists its own resources.
  if (a.quota !== undefined && a.quota !== b.quota) return true;
  return JSON.stringify(a.resources ?? []) === JSON.stringify(b.resources ?? []);
}

export function showDecision(d: Decision): string {
  if (d.allowed) return 'allowed';
  return `denied ${d.kind}${d.quota ? ` (${d.quota})` : ''} [${(d.resources ?? []).join('; ')}]: ${d.message ?? ''}`;
}

const DECIMAL: Record<string, bigint> = { '': 1n, k: 10n ** 3n, M: 10n ** 6n, G: 10n ** 9n, T: 10n ** 12n, P: 10n ** 15n, E: 10n ** 18n };
const BINARY: Record<string, bigint> = { Ki: 2n ** 10n, Mi: 2n ** 20n, Gi: 2n ** 30n, Ti: 2n ** 40n, Pi: 2n ** 50n, Ei: 2n ** 60n };
const FRACTION: Record<string, bigint> = { n: 10n ** 9n, u: 10n ** 6n, m: 10n ** 3n };

/** A quantity as an exact fraction [numerator, denominator]. */
export function exact(quantity: string): [bigint, bigint] {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/.exec(quantity.trim());
  if (!match) throw new Error(`not a quantity: ${quantity}`);
  const [, sign, whole = '', fraction = '', exponent, suffix = ''] = match;
  let numerator = BigInt(`${whole || '0'}${fraction}`) * (sign === '-' ? -1n : 1n);
  let denominator = 10n ** BigInt(fraction.length);
  if (exponent) {
    const power = Number(exponent.slice(1));
    if (power >= 0) numerator *= 10n ** BigInt(power);
    else denominator *= 10n ** BigInt(-power);
  } else if (suffix in FRACTION) denominator *= FRACTION[suffix]!;
  else numerator *= BINARY[suffix] ?? DECIMAL[suffix] ?? 1n;
  return [numerator, denominator];
}

export function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  const [an, ad] = exact(a ?? '0');
  const [bn, bd] = exact(b ?? '0');
  return an * bd === bn * ad;
}

/** Used per quota, over the resources each quota limits now. */
export type Usage = Record<string, ResourceList>;

export interface UsageDifference {
  /** quota/resource */
  readonly resource: string;
  readonly kubernetes?: string;
  readonly ledger?: string;
}

/** The resources (quota/resource) whose Used differ, with both values. */
export function usageDifferences(kubernetes: Usage, ledger: Usage, limited: Record<string, readonly string[]>): UsageDifference[] {
  const differences: UsageDifference[] = [];
  for (const [quota, resources] of Object.entries(limited)) {
    for (const resource of resources) {
      const k = kubernetes[quota]?.[resource];
      const q = ledger[quota]?.[resource];
      if (!sameQuantity(k, q))
        differences.push({
          resource: `${quota}/${resource}`,
          ...(k === undefined ? {} : { kubernetes: k }),
          ...(q === undefined ? {} : { ledger: q }),
        });
    }
  }
  return differences;
}

export function showDifference(d: UsageDifference): string {
  return `${d.resource}: kubernetes ${d.kubernetes ?? '(none)'}, ledger ${d.ledger ?? '(none)'}`;
}

/** a < b as quantities (absent is 0). */
export function lessQuantity(a: string | undefined, b: string | undefined): boolean {
  const [an, ad] = exact(a ?? '0');
  const [bn, bd] = exact(b ?? '0');
  return an * bd < bn * ad;
}
