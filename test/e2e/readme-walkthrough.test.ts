import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt, freePort } from '../support/processes.js';

/**
 * "The API, by example" (docs/api-by-example.md; the README's section of that name while it
 * still has one must say the same), run as its reader runs it: every ```sh block of the
 * page, in order, in one bash, from the directory of a started service (`npm start`'s
 * supervisor, on its own database, with the development token it writes there). Each
 * `# → STATUS {…}` line under a command is checked against what that command printed: the
 * status `api` prints on stderr, then the answer on stdout, as a JSON pattern (the fields
 * shown, `…` for any value or, in an array, for more items) or a /regular expression/.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECTION = '## The API, by example';
const PAGE = 'docs/api-by-example.md';
/** Another page whose commands a reader runs as written against the same start (its curl lines once carried no token: 5 × 401). */
const SHARED_QUOTAS_PAGE = 'docs/concepts/shared-quotas.md';

/** A page, as the walkthrough's section: its title made the section heading the parser looks for. */
function walkthroughSource(page = PAGE): string {
  return readFileSync(join(ROOT, page), 'utf8').replace(/^# .+$/m, SECTION);
}

interface Step {
  readonly script: string;
  /** Where in the page (the line of its expectation), for the failure message. */
  readonly line: number;
  readonly expected?: { readonly status: number; readonly body?: string };
}

/** The section's sh blocks, cut into steps: the lines up to each `# →` line, with what that line expects. */
function walkthroughSteps(readme: string): Step[] {
  const lines = readme.split('\n');
  const start = lines.indexOf(SECTION);
  if (start < 0) throw new Error(`no "${SECTION}" section`);
  const steps: Step[] = [];
  let inBlock = false;
  let pending: string[] = [];
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const line = lines[i]!;
    if (!inBlock) {
      inBlock = line === '```sh';
      continue;
    }
    if (line === '```') {
      if (pending.some((l) => l.trim() && !l.trim().startsWith('#'))) steps.push({ script: pending.join('\n'), line: i + 1 });
      pending = [];
      inBlock = false;
      continue;
    }
    const expectation = /^# → (\d{3})(?: (.+))?$/.exec(line);
    if (!expectation) {
      pending.push(line);
      continue;
    }
    steps.push({
      script: pending.join('\n'),
      line: i + 1,
      expected: { status: Number(expectation[1]), ...(expectation[2] ? { body: expectation[2] } : {}) },
    });
    pending = [];
  }
  return steps;
}

const ANY = '\u0000any';
const MORE = '\u0000more';

/**
 * A JSON pattern as the README writes it, made JSON: a bare `…` becomes ANY as a value, MORE
 * as an array item, and nothing between an object's members.
 */
function patternOf(text: string): unknown {
  let out = '';
  const stack: string[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') stack.push(c);
    else if (c === '}' || c === ']') stack.pop();
    if (c !== '…') {
      out += c;
      continue;
    }
    const before = out.trimEnd().at(-1);
    if (before === ':') out += JSON.stringify(ANY);
    else if (stack.at(-1) === '[') out += JSON.stringify(MORE);
  }
  const json = out
    .replace(/,(\s*[}\]])/g, '$1')
    .replace(/([{[]\s*),/g, '$1')
    .replace(/,\s*,/g, ',');
  return JSON.parse(json);
}

/** Where `actual` differs from the pattern (undefined when it matches): objects as subsets, arrays in order. */
function mismatch(actual: unknown, pattern: unknown, path = '$'): string | undefined {
  if (pattern === ANY) return actual === undefined ? `${path}: missing` : undefined;
  if (typeof pattern === 'string' && pattern.includes('…')) {
    const regex = new RegExp(
      `^${pattern
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[\\s\\S]*')}$`,
    );
    return typeof actual === 'string' && regex.test(actual)
      ? undefined
      : `${path}: ${JSON.stringify(actual)} does not match ${JSON.stringify(pattern)}`;
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
    const more = pattern.at(-1) === MORE;
    const items = more ? pattern.slice(0, -1) : pattern;
    if (more ? actual.length < items.length : actual.length !== items.length)
      return `${path}: ${actual.length} items, expected ${more ? 'at least ' : ''}${items.length}`;
    for (let i = 0; i < items.length; i++) {
      const problem = mismatch(actual[i], items[i], `${path}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (pattern !== null && typeof pattern === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(pattern)) {
      const problem = mismatch((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
      if (problem) return problem;
    }
    return undefined;
  }
  return actual === pattern ? undefined : `${path}: ${JSON.stringify(actual)}, expected ${JSON.stringify(pattern)}`;
}

/** What a step printed, against what the README says it prints; undefined when they agree. */
function verdict(step: Step, stdout: string, stderr: string, code: number): string | undefined {
  if (code !== 0) return `exited with ${code}: ${stderr.trim()}`;
  if (!step.expected) return undefined;
  const statuses = [...stderr.matchAll(/^HTTP (\d{3})$/gm)].map((m) => Number(m[1]));
  if (statuses.length !== 1) return `expected one \`api\` call, saw ${statuses.length} (stderr: ${stderr.trim()})`;
  if (statuses[0] !== step.expected.status) return `HTTP ${statuses[0]}, expected ${step.expected.status}: ${stdout.trim().slice(0, 600)}`;
  const body = step.expected.body;
  if (body === undefined) return undefined;
  const regex = /^\/(.*)\/([a-z]*)$/.exec(body);
  if (regex) return new RegExp(regex[1]!, `${regex[2]}m`).test(stdout) ? undefined : `${JSON.stringify(stdout)} does not match ${body}`;
  let actual: unknown;
  try {
    actual = JSON.parse(stdout);
  } catch {
    return `not JSON: ${stdout.slice(0, 600)}`;
  }
  const problem = mismatch(actual, patternOf(body));
  return problem && `${problem}\n  answer: ${stdout.trim().slice(0, 1200)}`;
}

let db: TestDatabase;
let dir: string;
let service: ChildProcess | undefined;
let port: number;
let log = '';

beforeAll(async () => {
  ensureBuilt();
  db = await createTestDatabase('qlwalk');
  dir = mkdtempSync(join(tmpdir(), 'ql-walkthrough-'));
  chmodSync(dir, 0o755);
  port = await freePort();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && name !== 'REDIS_URL') env[name] = value;
  // `npm start`'s supervisor on the test's database: migrations, the three apps, the development token in ./.quota-ledger.
  service = spawn(process.execPath, [join(ROOT, 'dist/apps/standalone/src/main.js')], {
    cwd: dir,
    env: { ...env, DATABASE_URL: db.url, PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  service.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  service.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (service.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not become ready:\n${log.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}, 90_000);

afterAll(async () => {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service!.once('exit', resolve));
    service.kill('SIGINT');
    await exited;
  }
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('the walkthrough ("The API, by example")', () => {
  it('finds the blocks and their expectations', () => {
    const steps = walkthroughSteps(walkthroughSource());
    expect(steps.filter((s) => s.expected).length).toBeGreaterThan(30);
    expect(steps.some((s) => s.expected?.status === 403)).toBe(true);
  });

  it("is the README's section, for as long as the README has one", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    if (!readme.split('\n').includes(SECTION)) return;
    const scripts = (text: string): string[] => walkthroughSteps(text).map((step) => `${step.script}\n${JSON.stringify(step.expected)}`);
    expect(scripts(readme), `the README's "The API, by example" differs from ${PAGE}: make the change in ${PAGE}`).toEqual(
      scripts(walkthroughSource()),
    );
  });

  it('answers every command as the page says, top to bottom', () => {
    expect(runPage(PAGE)).toBe('');
  }, 150_000);

  it('answers every command of the shared quotas page as it says, after it', () => {
    const steps = walkthroughSteps(walkthroughSource(SHARED_QUOTAS_PAGE));
    expect(steps.filter((s) => s.expected).length).toBeGreaterThanOrEqual(6);
    expect(runPage(SHARED_QUOTAS_PAGE)).toBe('');
  }, 150_000);

  /** Runs a page's steps as its reader would and says where an answer differs from the page (empty when none does). */
  function runPage(page: string): string {
    const steps = walkthroughSteps(walkthroughSource(page));
    // One bash runs them all (variables and functions carry over); each step's output goes to its own files.
    const out = join(dir, `steps-${page.replace(/\W/g, '_')}`);
    const script = steps
      .map((step, i) => `{\n${step.script}\n} >"${out}.${i}.out" 2>"${out}.${i}.err" </dev/null; echo $? >"${out}.${i}.rc"`)
      .join('\n');
    const run = spawnSync('bash', ['-c', script], {
      cwd: dir,
      env: { ...process.env, API: `http://127.0.0.1:${port}` },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.error).toBeUndefined();
    const failures = steps.flatMap((step, i) => {
      const read = (suffix: string): string => readFileSync(`${out}.${i}.${suffix}`, 'utf8');
      const problem = verdict(step, read('out'), read('err'), Number(read('rc').trim()));
      return problem ? [`${page}:${step.line}: ${step.script.trim().split('\n')[0]}\n  ${problem}`] : [];
    });
    return failures.join('\n\n');
  }

  it('catches an answer the page gets wrong', () => {
    const step: Step = { script: '', line: 1, expected: { status: 200, body: '{"items":[{"name":"web-3","dryRun":true},…],"next":…}' } };
    expect(verdict(step, '{"items":[{"name":"web-3","dryRun":true},{"name":"x"}],"next":"5"}', 'HTTP 200\n', 0)).toBeUndefined();
    expect(verdict(step, '{"items":[{"name":"web-3","dryRun":false}],"next":"5"}', 'HTTP 200\n', 0)).toContain('$.items[0].dryRun');
    expect(verdict(step, '{"items":[{"name":"web-3","dryRun":true}]}', 'HTTP 200\n', 0)).toContain('$.next: missing');
    expect(verdict(step, '{"items":[]}', 'HTTP 403\n', 0)).toContain('HTTP 403, expected 200');
    const exact: Step = { script: '', line: 1, expected: { status: 200, body: '{"items":[{"m":"pods \\"a\\" is forbidden: …"}]}' } };
    expect(verdict(exact, '{"items":[{"m":"pods \\"a\\" is forbidden: over"}]}', 'HTTP 200\n', 0)).toBeUndefined();
    expect(verdict(exact, '{"items":[{"m":"pods \\"a\\" is forbidden: over"},{"m":"x"}]}', 'HTTP 200\n', 0)).toContain(
      '2 items, expected 1',
    );
    expect(verdict(exact, '{"items":[{"m":"pods \\"b\\" is forbidden: over"}]}', 'HTTP 200\n', 0)).toContain('does not match');
  });
});
