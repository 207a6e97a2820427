/**
 * One racer of test/integration/group-commit.test.ts, in a process of its own: a LedgerCommands
 * on its own pool admits ADMISSIONS pods across NAMESPACES (comma-separated) with CLIENTS
 * concurrent callers, and commits or releases some of what it was allowed, so that its group
 * commits span the same namespaces as the other racer's, with every kind of write. Prints one
 * JSON line: what its callers were told.
 *
 *   tsx --tsconfig tsconfig.json test/support/group-commit-racer.ts   (DATABASE_URL, NAMESPACES, ADMISSIONS, CLIENTS, NAME)
 */
import 'reflect-metadata';
import type { Pod } from '@quota/domain';
import { LedgerCommands, openDataSource } from '@quota/ledger';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const namespaces = env('NAMESPACES').split(',');
const admissions = Number(env('ADMISSIONS'));
const clients = Number(env('CLIENTS'));
const name = env('NAME');

const dataSource = await openDataSource({ url: env('DATABASE_URL'), poolSize: 4, applicationName: `racer-${name}` });
const commands = new LedgerCommands(dataSource, { retryBaseMs: 1 });
const told = { allowed: 0, denied: 0, committed: 0, released: 0, errors: [] as string[] };
let next = 0;

const pod = (podName: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: podName, uid: `uid-${podName}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '10m' } } }] },
});

async function caller(): Promise<void> {
  while (next < admissions) {
    const n = next++;
    const namespace = namespaces[n % namespaces.length] ?? 'race-0';
    const podName = `${name}-${n}`;
    try {
      const outcome = await commands.admit({
        namespace,
        source: 'webhook',
        request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name: podName, object: pod(podName) },
        requestKey: `review:${podName}`,
        dryRun: false,
        requester: name,
      });
      if (!outcome.result.allowed) {
        told.denied++;
        continue;
      }
      told.allowed++;
      const id = outcome.result.reservationId ?? '';
      // A third are committed, a third released (making room for more), a third left pending.
      if (n % 3 === 0) {
        if ((await commands.commit(namespace, id, { actor: name })).changed) told.committed++;
      } else if (n % 3 === 1) {
        if ((await commands.release(namespace, id, { actor: name, reason: 'cancelled' })).changed) told.released++;
      }
    } catch (error) {
      told.errors.push(error instanceof Error ? error.message : String(error));
    }
  }
}

await Promise.all(Array.from({ length: clients }, caller));
const { transactions, commands: decided } = commands.stats;
await commands.close();
await dataSource.destroy();
console.log(JSON.stringify({ ...told, transactions, commands: decided }));
