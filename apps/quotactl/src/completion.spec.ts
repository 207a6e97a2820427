import { describe, expect, it } from 'vitest';
import { COMMANDS, EXIT, run, type Io } from './cli.js';
import { complete } from './completion.js';

/** The candidates of a `__complete` answer, and its directive (cobra's bits: 4 = no file names). */
function answer(...words: string[]): { values: string[]; directive: number } {
  const lines = complete(COMMANDS, words).trimEnd().split('\n');
  const last = lines.pop() ?? '';
  expect(last).toMatch(/^:\d+$/);
  return { values: lines.map((l) => l.split('\t')[0] ?? ''), directive: Number(last.slice(1)) };
}

function io(): Io & { out: string; err: string } {
  const state = { out: '', err: '' };
  return Object.assign(state, {
    stdout: (text: string) => void (state.out += text),
    stderr: (text: string) => void (state.err += text),
    readFile: () => Promise.reject(new Error('no files here')),
    readStdin: async () => '',
    cwd: '/work',
    env: {},
  });
}

describe('__complete: what the shells and kubectl get on TAB', () => {
  it('offers every command with its summary, then those that start with the word typed', () => {
    expect(answer('')).toEqual({ values: COMMANDS.map((c) => c.name), directive: 4 });
    expect(answer('de').values).toEqual(['describe', 'delete', 'decisions']);
    expect(complete(COMMANDS, ['ver'])).toBe("version\tprint quotactl's version\n:4\n");
  });

  it('offers the resource types after get and describe, only the shared ones after usage, shells after completion', () => {
    expect(answer('get', '').values).toEqual(['quota', 'limitrange', 'clusterresourcequota', 'hrq', 'namespace']);
    expect(answer('describe', '').values).toEqual(['quota', 'limitrange', 'clusterresourcequota', 'hrq']);
    expect(answer('delete', '').values).toEqual(['quota', 'limitrange', 'clusterresourcequota', 'hrq', 'namespace', 'reservation']);
    expect(answer('decisions', '--order', '').values).toEqual(['newest', 'oldest']);
    expect(answer('describe', '-n', 'team-a', 'l').values).toEqual(['limitrange']);
    expect(answer('usage', '').values).toEqual(['clusterresourcequota', 'hrq']);
    expect(answer('completion', '').values).toEqual(['bash', 'zsh']);
    expect(answer('help', 'webh').values).toEqual(['webhook-config']);
    // One type only: after it comes a name, which would need the server.
    expect(answer('get', 'quota', '')).toEqual({ values: [], directive: 4 });
  });

  it("offers a command's flags, and the global ones, after a dash", () => {
    const flags = answer('reserve', '--').values;
    expect(flags).toEqual(expect.arrayContaining(['--kind', '--resources', '--dry-run', '--namespace', '--server', '--output']));
    expect(flags).not.toContain('--ca-file');
    expect(answer('get', 'quota', '--na').values).toEqual(['--namespace']);
    // webhook-config needs no server: no --server or --token to offer.
    expect(answer('webhook-config', '--s').values).toEqual(['--service-namespace', '--service-name', '--service-port']);
  });

  it('completes flag values: the formats the command prints, closed sets, and files where a file is due', () => {
    expect(answer('get', 'quota', '-o', '')).toEqual({ values: ['table', 'json', 'yaml', 'name'], directive: 4 });
    expect(answer('usage', '--output', '')).toEqual({ values: ['table', 'json', 'yaml'], directive: 4 });
    expect(answer('get', 'quota', '--output=n').values).toEqual(['--output=name']);
    expect(answer('webhook-config', '--failure-policy', '').values).toEqual(['Fail', 'Ignore']);
    // A file: no candidate and directive 0, so the shell lists file names.
    expect(answer('apply', '-f', '')).toEqual({ values: [], directive: 0 });
    expect(answer('webhook-config', '--ca-file', 'c')).toEqual({ values: [], directive: 0 });
    // A value of a flag is not the command: `-n get` is a namespace called get.
    expect(answer('-n', 'get', '').values).toContain('apply');
    expect(answer('-n', '')).toEqual({ values: [], directive: 4 });
  });

  it('answers through run() before parsing, so a half-typed flag is no usage error', async () => {
    const out = io();
    expect(await run(['__complete', 'get', 'quota', '--nam'], out)).toBe(EXIT.ok);
    expect(out.out).toMatch(/^--namespace\t.*\n:4\n$/);
    expect(out.err).toBe('');
  });
});

describe('completion bash|zsh', () => {
  it('prints a script that registers both program names and asks the program itself', async () => {
    const bash = io();
    expect(await run(['completion', 'bash'], bash)).toBe(EXIT.ok);
    expect(bash.out).toContain('__complete');
    expect(bash.out).toMatch(/^complete -F _quotactl_complete quotactl kubectl-quota$/m);
    const zsh = io();
    expect(await run(['completion', 'zsh'], zsh)).toBe(EXIT.ok);
    expect(zsh.out.split('\n')[0]).toBe('#compdef quotactl kubectl-quota');
    expect(zsh.out).toContain('__complete');
  });

  it.each([[['completion']], [['completion', 'fish']], [['completion', 'bash', 'zsh']]])('refuses %j with exit 2', async (argv) => {
    const out = io();
    expect(await run(argv, out)).toBe(EXIT.usage);
    expect(out.err).toMatch(/^error: completion takes one shell: bash or zsh/);
  });
});
