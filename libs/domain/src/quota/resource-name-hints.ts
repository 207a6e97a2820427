import { CHARGED_KINDS } from '../kube/kinds.js';
import { groupResourceString } from '../kube/forbidden.js';
import { STANDARD_QUOTA_RESOURCE_NAMES } from '../validation/resource-names.js';

/**
 * "Did you mean …?" for a resource name that no quota limits (`requests.cpus=1` and
 * `pod=1` were reserved and charged nothing, silently). The candidates are the names Kubernetes'
 * quota knows (STANDARD_QUOTA_RESOURCE_NAMES, `requests.storage` among them), the object counts
 * of the kinds the service charges (`count/pods`, `count/deployments.apps`, …) and the names the
 * caller's quotas limit; the nearest within a small edit distance wins, a name a quota limits
 * before one none does. Pure: no Kubernetes knowledge beyond those lists.
 */

/** `count/<resource>[.<group>]` of every kind the service charges, as a quota names them. */
export const OBJECT_COUNT_NAMES: readonly string[] = CHARGED_KINDS.map((kind) => `count/${groupResourceString(kind.groupResource)}`);

const STANDARD_NAMES: readonly string[] = [...STANDARD_QUOTA_RESOURCE_NAMES, ...OBJECT_COUNT_NAMES];

/** Resources that quota also spells with `requests.` (`cpu` and `requests.cpu` are the same request). */
const REQUEST_ALIASES: ReadonlySet<string> = new Set(['cpu', 'memory', 'ephemeral-storage', 'storage']);

/** The object counts Kubernetes also names without `count/` (`pods` and `count/pods`). */
const LEGACY_COUNTS: ReadonlySet<string> = new Set([
  'pods',
  'services',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'replicationcontrollers',
  'resourcequotas',
]);

/** `count/deployments` → `count/deployments.apps`: a charged kind's count without its group. */
const COUNT_WITH_GROUP: ReadonlyMap<string, string> = new Map(
  CHARGED_KINDS.filter((kind) => kind.groupResource.group !== '').map((kind) => [
    `count/${kind.groupResource.resource}`,
    `count/${groupResourceString(kind.groupResource)}`,
  ]),
);

/** Other spellings of the same quantity, as far as quota counts them alike. */
function spellingsOf(name: string): string[] {
  const spellings: string[] = [];
  if (REQUEST_ALIASES.has(name)) spellings.push(`requests.${name}`);
  if (name.startsWith('requests.') && REQUEST_ALIASES.has(name.slice('requests.'.length))) spellings.push(name.slice('requests.'.length));
  if (LEGACY_COUNTS.has(name)) spellings.push(`count/${name}`);
  if (name.startsWith('count/') && LEGACY_COUNTS.has(name.slice('count/'.length))) spellings.push(name.slice('count/'.length));
  return spellings;
}

/**
 * The edit distance with adjacent transpositions (optimal string alignment): `memroy` is one
 * edit from `memory`. Stops early once every way is above `max` (then returns max + 1).
 */
export function editDistance(a: string, b: string, max = Number.MAX_SAFE_INTEGER): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current.push(d);
      best = Math.min(best, d);
    }
    if (best > max) return max + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** How far a suggestion may be: one edit for short names (`pod`, `cpus`), two from eight characters on. */
const reach = (name: string): number => (name.length < 8 ? 1 : 2);

/**
 * The name the caller most likely meant, or undefined: first another spelling of the same
 * resource that a quota limits (`cpu` where a quota limits `requests.cpu`), then a charged kind's
 * count with its group (`count/deployments.apps`), then the nearest candidate within reach
 * (case aside), a name in `limited` before a standard one at the same distance.
 */
export function nearestResourceName(name: string, limited: ReadonlySet<string>): string | undefined {
  const spelled = spellingsOf(name).find((spelling) => limited.has(spelling));
  if (spelled) return spelled;
  const grouped = COUNT_WITH_GROUP.get(name);
  if (grouped) return grouped;
  const lower = name.toLowerCase();
  const max = reach(name);
  let best: { name: string; distance: number; limited: boolean } | undefined;
  for (const candidate of [...limited, ...STANDARD_NAMES]) {
    if (candidate === name) continue;
    const distance = editDistance(lower, candidate.toLowerCase(), max);
    if (distance > max) continue;
    const isLimited = limited.has(candidate);
    if (!best || distance < best.distance || (distance === best.distance && isLimited && !best.limited))
      best = { name: candidate, distance, limited: isLimited };
  }
  return best?.name;
}
