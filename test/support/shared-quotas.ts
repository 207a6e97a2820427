import type pg from 'pg';
import {
  evolve,
  initialState,
  isSharedQuotaKey,
  Resources,
  type NamespaceState,
  type RecordedEvent,
  type ResourceList,
} from '@quota/domain';

/**
 * What the shared-quota tests check after every race and history: each namespace's
 * head equals the fold of its stream (its own quotas and its part of each shared quota), and each
 * shared quota's head holds, for exactly the namespaces whose fold is covered by it, exactly what
 * each fold says it contributes.
 */
export async function streamOf(pool: pg.Pool, key: string): Promise<RecordedEvent[]> {
  const { rows } = await pool.query<{ version: string; type: string; data: unknown; at_ms: number }>(
    `SELECT version, type, data, (extract(epoch from recorded_at) * 1000)::float8 AS at_ms FROM ledger_events WHERE namespace = $1 ORDER BY version`,
    [key],
  );
  return rows.map((r) => ({ type: r.type, data: r.data, version: Number(r.version), at: Math.floor(r.at_ms) }) as RecordedEvent);
}

/** Every namespace's folded state, version by version (the states after each event). */
export async function foldedNamespaces(pool: pg.Pool): Promise<Map<string, NamespaceState[]>> {
  const { rows } = await pool.query<{ namespace: string }>(`SELECT DISTINCT namespace FROM ledger_events ORDER BY namespace`);
  const out = new Map<string, NamespaceState[]>();
  for (const { namespace } of rows) {
    if (isSharedQuotaKey(namespace)) continue;
    const states: NamespaceState[] = [];
    let state = initialState();
    for (const event of await streamOf(pool, namespace)) {
      state = evolve(state, event);
      states.push(state);
    }
    out.set(namespace, states);
  }
  return out;
}

const canonical = (list: ResourceList | undefined): Record<string, string> => Resources.canonicalResourceList(list ?? Resources.EMPTY);

/** Heads versus folds; returns the disagreements (empty when all agree). */
export async function disagreements(pool: pg.Pool): Promise<string[]> {
  const problems: string[] = [];
  const folded = await foldedNamespaces(pool);
  const { rows: heads } = await pool.query<{
    namespace: string;
    version: string;
    state: {
      quotas: { definition: { name: string }; used: Record<string, string> }[];
      shared?: { key: string; used: Record<string, string> }[];
    };
  }>(`SELECT namespace, version, state FROM namespace_heads`);
  const expectedMembers = new Map<string, Record<string, Record<string, string>>>();
  for (const head of heads) {
    const states = folded.get(head.namespace) ?? [];
    const last = states.at(-1) ?? initialState();
    if (Number(head.version) !== last.version) problems.push(`${head.namespace}: head at ${head.version}, stream at ${last.version}`);
    const headShared = Object.fromEntries((head.state.shared ?? []).map((q) => [q.key, canonical(Resources.resourceList(q.used))]));
    const foldShared = Object.fromEntries([...last.shared.keys()].map((key) => [key, canonical(last.sharedUsed.get(key))]));
    if (JSON.stringify(headShared) !== JSON.stringify(foldShared))
      problems.push(`${head.namespace}: head shared ${JSON.stringify(headShared)} != fold ${JSON.stringify(foldShared)}`);
    const headUsed = Object.fromEntries(head.state.quotas.map((q) => [q.definition.name, canonical(Resources.resourceList(q.used))]));
    const foldUsed = Object.fromEntries([...last.quotas.keys()].map((name) => [name, canonical(last.used.get(name))]));
    if (JSON.stringify(headUsed) !== JSON.stringify(foldUsed))
      problems.push(`${head.namespace}: head used ${JSON.stringify(headUsed)} != fold ${JSON.stringify(foldUsed)}`);
    for (const [key, used] of Object.entries(foldShared)) {
      const members = expectedMembers.get(key) ?? {};
      members[head.namespace] = used;
      expectedMembers.set(key, members);
    }
  }
  const { rows: shared } = await pool.query<{ key: string; state: { members: Record<string, Record<string, string>> } }>(
    `SELECT key, state FROM shared_quota_heads`,
  );
  for (const row of shared) {
    const members = Object.fromEntries(
      Object.entries(row.state.members).map(([ns, used]) => [ns, canonical(Resources.resourceList(used))]),
    );
    const expected = expectedMembers.get(row.key) ?? {};
    const sorted = (o: Record<string, unknown>) =>
      JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))));
    if (sorted(members) !== sorted(expected)) problems.push(`${row.key}: head members ${sorted(members)} != folds ${sorted(expected)}`);
  }
  for (const key of expectedMembers.keys())
    if (!shared.some((s) => s.key === key)) problems.push(`${key}: covers namespaces but has no head`);
  return problems;
}
