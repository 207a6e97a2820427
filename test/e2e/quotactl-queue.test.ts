import { loadConfig } from '@quota/config';
import { LedgerCommands } from '@quota/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type Io } from '../../apps/quotactl/src/cli.js';
import { startApi, type RunningApi } from '../support/api.js';

/**
 * `quotactl reserve --wait` and `quotactl queue` against the real service: queued,
 * its position and what it waits for on stderr, watched until the release that frees room
 * admits it, --no-follow, a cancel with release, an expiry, and the queue's table.
 */
let api: RunningApi;
beforeAll(async () => {
  api = await startApi({ queue: { ...loadConfig({}).queue, sweepIntervalMs: 200, waitMaxSeconds: 600 } }, 'qlctlqueue');
  const ledger = api.app.get(LedgerCommands);
  for (const namespace of ['team-a', 'team-b', 'team-c', 'team-d'])
    await ledger.putQuota(namespace, { name: 'compute', spec: { hard: { cpu: '2' } } }, { actor: 'test' });
});
afterAll(async () => {
  await api?.close();
});

interface Ran {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

async function quotactl(...argv: string[]): Promise<Ran> {
  const state = { out: '', err: '' };
  const io: Io = {
    stdout: (text) => void (state.out += text),
    stderr: (text) => void (state.err += text),
    readFile: async () => '',
    readStdin: async () => '',
    cwd: process.cwd(),
    env: { QUOTA_LEDGER_SERVER: api.base },
    now: () => Date.now(),
    version: 'test',
  };
  const code = await run(argv, io);
  return { code, ...state };
}

const job = (namespace: string, cpu: string, ...extra: string[]) =>
  quotactl('reserve', '-n', namespace, '--kind', 'Job', '--resource', 'jobs.batch.example.com', '--resources', `cpu=${cpu}`, ...extra);

/** Until the namespace's queue holds `count` waiters (a queued reserve runs concurrently with the test). */
async function queued(namespace: string, count: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await api.request('GET', `/v1/namespaces/${namespace}/queue`)).body.items.length === count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${namespace}'s queue never held ${count}`);
}

describe('quotactl reserve --wait and quotactl queue', () => {
  it('says it is queued, where and for what, lists it in the queue, and returns the id once a release admits it', async () => {
    const holder = await job('team-a', '2');
    expect(holder.code).toBe(0);
    const waiting = job('team-a', '1', '--wait', '10m', '--priority', '5');
    await queued('team-a', 1);

    const list = await quotactl('queue', '-n', 'team-a');
    expect(list.code).toBe(0);
    const [header, row, more] = list.out.split('\n');
    expect(header).toMatch(/^POSITION +ID +PRIORITY +RESOURCES +AGE +EXPIRES +TYPICAL WAIT +WAITING FOR$/);
    expect(row).toMatch(/^1 +\S+ +5 +cpu=1 +\d+s +9m\d+s +<none> +compute: cpu 1 \(used 2\/2\)$/);
    expect(more).toBe('');
    const id = (await quotactl('queue', '-n', 'team-a', '-o', 'name')).out.trim().replace('reservation/', '');

    expect((await quotactl('release', '-n', 'team-a', holder.out.trim())).code).toBe(0);
    const admitted = await waiting;
    expect(admitted.code, admitted.err).toBe(0);
    expect(admitted.out).toBe(`${id}\n`);
    expect(admitted.err).toMatch(
      new RegExp(
        `^reservation/${id} queued at position 1 in team-a, expires in 9m\\d+s \\(\\S+\\)\\n  waiting for compute: cpu 1 \\(used 2/2\\)\\n`,
      ),
    );
    expect(admitted.err).toMatch(new RegExp(`reservation/${id} admitted after \\d+s\\n$`));
    expect((await api.request('GET', `/v1/namespaces/team-a/reservations/${id}`)).body).toMatchObject({
      state: 'reserved',
      charged: { cpu: '1' },
    });

    const history = (await quotactl('history', '-n', 'team-a')).out;
    expect(history).toMatch(new RegExp(`Queued +\\S+ +${id} job/<unnamed> waits for: cpu=1 priority: 5 until: \\S+ short in: compute\\n`));
    expect(history).toMatch(new RegExp(`AdmittedFromQueue +\\S+ +${id} admitted by the room Released \\(version \\d+\\) freed\\n`));

    const empty = await quotactl('queue', '-n', 'team-a');
    expect(empty).toEqual({ code: 0, out: '', err: 'No reservations waiting in team-a namespace.\n' });
  });

  it('--no-follow returns the queued id at once; release cancels it; -o json prints the queued answer', async () => {
    expect((await job('team-b', '2')).code).toBe(0);
    const queuedNow = await job('team-b', '1', '--wait', '5m', '--no-follow');
    expect(queuedNow.code).toBe(0);
    const id = queuedNow.out.trim();
    expect(queuedNow.err).toContain(`reservation/${id} queued at position 1 in team-b`);
    const json = await job('team-b', '1', '--wait', '5m', '--no-follow', '-o', 'json');
    expect(JSON.parse(json.out)).toMatchObject({ state: 'queued', position: 2, waitingFor: [{ quota: 'compute' }] });

    const listed = JSON.parse((await quotactl('queue', '-n', 'team-b', '-o', 'json')).out);
    expect(listed.items.map((item: { id: string }) => item.id)).toEqual([id, JSON.parse(json.out).id]);
    const cancelled = await quotactl('release', '-n', 'team-b', id);
    expect(cancelled).toMatchObject({ code: 0, out: `reservation/${id} cancelled\n` });
  });

  it('wait takes up a reservation queued with --no-follow and returns its id once a release admits it; one admitted before returns at once', async () => {
    const holder = await job('team-d', '2');
    expect(holder.code).toBe(0);
    const id = (await job('team-d', '1', '--wait', '5m', '--no-follow')).out.trim();
    const waiting = quotactl('wait', '-n', 'team-d', `reservation/${id}`);
    // It watches: the release comes after the wait has said where it stands.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await quotactl('release', '-n', 'team-d', holder.out.trim())).code).toBe(0);
    const admitted = await waiting;
    expect(admitted.code, admitted.err).toBe(0);
    expect(admitted.out).toBe(`${id}\n`);
    expect(admitted.err).toMatch(
      new RegExp(
        `^reservation/${id} queued at position 1 in team-d, expires in 4m\\d+s \\(\\S+\\)\\n  waiting for compute: cpu 1 \\(used 2/2\\)\\n`,
      ),
    );
    expect(admitted.err).toMatch(new RegExp(`reservation/${id} admitted after \\d+s\\n$`));

    const again = await quotactl('wait', '-n', 'team-d', id);
    expect(again).toEqual({ code: 0, out: `${id}\n`, err: `reservation/${id} was admitted before this wait\n` });
    const unknown = await quotactl('wait', '-n', 'team-d', 'no-such-reservation');
    expect(unknown.code).toBe(4);
    expect(unknown.err).toMatch(/NotFound/);
  });

  it('exits 3 with the reason when it expires while it waits', async () => {
    expect((await job('team-c', '2')).code).toBe(0);
    const expired = await job('team-c', '1', '--wait', '1s');
    expect(expired.code).toBe(3);
    expect(expired.out).toBe('');
    expect(expired.err).toMatch(/error: reservation\/\S+ expired while it waited: .*without room in compute/);
  });

  it('refuses a wait the server would refuse before sending it, and says what the server refused', async () => {
    const object = await quotactl('reserve', '-n', 'team-a', '--kind', 'Pod', '-f', '-', '--wait', '1m');
    expect(object).toMatchObject({ code: 2, err: expect.stringContaining('--wait takes --resources') });
    const tooLong = await job('team-a', '1', '--wait', '2h');
    expect(tooLong.code).toBe(1);
    expect(tooLong.err).toMatch(/^Error from server \(Invalid\): .*600/);
  });
});
