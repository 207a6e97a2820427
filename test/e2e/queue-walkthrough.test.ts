import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type Io } from '../../apps/quotactl/src/cli.js';
import { startApi, type RunningApi } from '../support/api.js';
import { writeTokensFile } from '../support/tokens.js';

/**
 * docs/concepts/queue.md's "End to end with quotactl", run as its reader runs it: every
 * `$ npm run -s quotactl -- …` of its console blocks, in order, against the service, and what
 * each printed (stderr and stdout as a terminal interleaves them) compared with the page once
 * ids, instants and durations are masked and runs of blanks are one. The one command that waits
 * (`--wait` without `--no-follow`) runs in the background, as in the page's first terminal: its
 * output is its own block's lines then the block without a command (what that terminal prints
 * once the release admits it). Ids the page shows stand for the ones this run makes.
 */
const PAGE = fileURLToPath(new URL('../../docs/concepts/queue.md', import.meta.url));
const SECTION = '## End to end with quotactl';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

interface Step {
  readonly argv: string[];
  readonly stdin?: string;
  /** What the page shows it printed (a waiting command: up to when it is admitted). */
  readonly expected: string[];
  readonly background: boolean;
}

/** The section's console blocks as steps; a block without a command is the background step's outcome. */
function walkthrough(page: string): { steps: Step[]; outcome: string[] } {
  const lines = page.split('\n');
  const start = lines.indexOf(SECTION);
  if (start < 0) throw new Error(`no "${SECTION}" section`);
  const steps: Step[] = [];
  let outcome: string[] = [];
  let block: string[] | undefined;
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const line = lines[i]!;
    if (block === undefined) {
      if (line === '```console') block = [];
      continue;
    }
    if (line !== '```') {
      block.push(line);
      continue;
    }
    if (!block.some((l) => l.startsWith('$ '))) outcome = block;
    else steps.push(...stepsOf(block));
    block = undefined;
  }
  return { steps, outcome };
}

function stepsOf(block: readonly string[]): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < block.length; i++) {
    const command = /^\$ npm run -s quotactl -- (.+)$/.exec(block[i]!)?.[1];
    if (command === undefined) throw new Error(`not a quotactl command: ${block[i]}`);
    const heredoc = /^(.*) <<'(\w+)'$/.exec(command);
    let stdin: string | undefined;
    if (heredoc) {
      const end = block.indexOf(heredoc[2]!, i + 1);
      stdin = `${block.slice(i + 1, end).join('\n')}\n`;
      i = end;
    }
    const expected: string[] = [];
    while (i + 1 < block.length && !block[i + 1]!.startsWith('$ ')) expected.push(block[++i]!);
    const argv = (heredoc ? heredoc[1]! : command).split(' ');
    steps.push({
      argv,
      ...(stdin !== undefined ? { stdin } : {}),
      expected,
      background: argv.includes('--wait') && !argv.includes('--no-follow'),
    });
  }
  return steps;
}

/** Ids, instants and durations as placeholders, blanks collapsed: what stays the same from run to run. */
function masked(lines: readonly string[]): string[] {
  return lines.map((line) =>
    line
      .replace(UUID, '<id>')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
      .replace(/\b(\d+[dhms])+\b/g, '<duration>')
      .replace(/ +/g, ' ')
      .trimEnd(),
  );
}

// `npm start`'s development token is named "developer": the history's ACTOR.
const DEVELOPER = { name: 'developer', token: 'walkthrough-token-0123456789', roles: ['admin', 'admission', 'auditor'] };
let api: RunningApi;
beforeAll(async () => {
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile([DEVELOPER]) }, 'qlqueuewalk');
});
afterAll(async () => {
  await api?.close();
});

async function quotactl(argv: readonly string[], stdin = ''): Promise<string[]> {
  let printed = '';
  const io: Io = {
    stdout: (text) => void (printed += text),
    stderr: (text) => void (printed += text),
    readFile: async () => '',
    readStdin: async () => stdin,
    cwd: process.cwd(),
    env: { QUOTA_LEDGER_SERVER: api.base, QUOTA_LEDGER_TOKEN: DEVELOPER.token },
    now: () => Date.now(),
    version: 'test',
  };
  const code = await run(argv, io);
  if (code !== 0) throw new Error(`quotactl ${argv.join(' ')} exited ${code}: ${printed}`);
  return printed.replace(/\n$/, '').split('\n');
}

describe('docs/concepts/queue.md, end to end with quotactl', () => {
  it('finds the commands, one of them waiting, and what it prints once admitted', () => {
    const { steps, outcome } = walkthrough(readFileSync(PAGE, 'utf8'));
    expect(steps.length).toBeGreaterThanOrEqual(7);
    expect(steps.filter((s) => s.background)).toHaveLength(1);
    expect(outcome.length).toBeGreaterThan(0);
    expect(
      masked([
        'reservation/5e0a99d3-a711-4211-9ca6-397374532e03 queued at position 1 in demo, expires in 9m59s (2026-11-28T20:38:49.100Z)',
      ]),
    ).toEqual(['reservation/<id> queued at position 1 in demo, expires in <duration> (<time>)']);
  });

  it('prints what the page says, command by command', async () => {
    const { steps, outcome } = walkthrough(readFileSync(PAGE, 'utf8'));
    // The page's ids stand for this run's: each learnt where the page shows it printed.
    const ids = new Map<string, string>();
    const learn = (expected: readonly string[], actual: readonly string[]): void => {
      const theirs = expected.join('\n').match(UUID) ?? [];
      const ours = actual.join('\n').match(UUID) ?? [];
      theirs.forEach((id, i) => ours[i] !== undefined && !ids.has(id) && ids.set(id, ours[i]!));
    };
    let waiting: { step: Step; printed: Promise<string[]> } | undefined;
    for (const step of steps) {
      const argv = step.argv.map((arg) => ids.get(arg) ?? arg);
      if (step.background) {
        waiting = { step, printed: quotactl(argv, step.stdin) };
        await queued(1);
        continue;
      }
      const printed = await quotactl(argv, step.stdin);
      expect(masked(printed), `quotactl ${argv.join(' ')}`).toEqual(masked(step.expected));
      learn(step.expected, printed);
    }
    expect(waiting).toBeDefined();
    const printed = await waiting!.printed;
    expect(masked(printed), 'the waiting command').toEqual(masked([...waiting!.step.expected, ...outcome]));
  });
});

/** Until the demo namespace's queue holds `count` waiters. */
async function queued(count: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (
      (await api.request('GET', '/v1/namespaces/demo/queue', undefined, { authorization: `Bearer ${DEVELOPER.token}` })).body.items
        ?.length === count
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the queue never held ${count}`);
}
