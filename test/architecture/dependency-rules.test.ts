import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import {
  aliasesOf,
  circles,
  FILE_LINES_MAX,
  folderGraph,
  importGraph,
  lineCount,
  longFunctions,
  readSources,
  sourceFiles,
} from './source-shape.js';

/**
 * The dependency rules of docs/style.md are lint rules; these cases prove the rules bite
 * (a rule that cannot fail protects nothing).
 */
const eslint = new ESLint({ cwd: process.cwd() });

async function violations(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId?.startsWith('no-restricted')).map((m) => m.message);
}

describe('dependency rules', () => {
  it.each([
    ["import { Injectable } from '@nestjs/common';", /no framework/],
    ["import { DataSource } from 'typeorm';", /no framework/],
    ["import pg from 'pg';", /no framework/],
    ["import { Queue } from 'bullmq';", /no framework/],
    ["import { IsString } from 'class-validator';", /no framework/],
    ["import { readFileSync } from 'node:fs';", /no I\/O/],
    ["import { randomUUID } from 'node:crypto';", /no I\/O/],
    ['export const now = Date.now();', /no clock/],
    ['export const now = new Date();', /no clock/],
    ['export const r = Math.random();', /no randomness/],
    ['export const id = crypto.randomUUID();', /randomness/],
    ["export const env = process.env['X'];", /no environment/],
    ["import { loadConfig } from '@quota/config';", /imports no other lib/],
  ])('libs/domain rejects `%s`', async (code, message) => {
    const found = await violations('libs/domain/src/quota/example.ts', code);
    expect(found.join('\n')).toMatch(message);
  });

  it('libs/domain may parse a timestamp it is given', async () => {
    expect(await violations('libs/domain/src/events/example.ts', "export const t = Date.parse('2026-01-01T00:00:00Z');")).toEqual([]);
  });

  it('apps reach libs only through their index alias', async () => {
    const found = await violations(
      'apps/admission-api/src/example.ts',
      "import { Quantity } from '../../../libs/domain/src/quantity/quantity.js';",
    );
    expect(found.join('\n')).toMatch(/index alias/);
    expect(await violations('apps/admission-api/src/example.ts', "import { Quantity } from '@quota/domain';")).toEqual([]);
  });

  it('apps never import each other', async () => {
    const found = await violations('apps/admission-api/src/example.ts', "import { x } from '../../../apps/reconciler/src/main.js';");
    expect(found.join('\n')).toMatch(/Apps never import each other/);
  });

  it('libs/config imports no lib, libs/ledger only the domain', async () => {
    expect((await violations('libs/config/src/example.ts', "import { Quantity } from '@quota/domain';")).join('\n')).toMatch(
      /imports no lib/,
    );
    expect((await violations('libs/ledger/src/example.ts', "import { loadConfig } from '@quota/config';")).join('\n')).toMatch(
      /only @quota\/domain/,
    );
    expect(await violations('libs/ledger/src/example.ts', "import { Quantity } from '@quota/domain';")).toEqual([]);
  });

  it('libs/ledger reaches migrations/ only through its index, the list the data source runs', async () => {
    const migration = "import { CreateLedgerEvents1795293483763 } from '../../../../migrations/1795293483763-CreateLedgerEvents.js';";
    expect((await violations('libs/ledger/src/database/example.ts', migration)).join('\n')).toMatch(/only migrations\/index\.js/);
    expect((await violations('libs/ledger/src/example.ts', "import { x } from '../../../migrations/support.js';")).join('\n')).toMatch(
      /only migrations\/index\.js/,
    );
    expect(
      await violations('libs/ledger/src/database/example.ts', "import { MIGRATIONS } from '../../../../migrations/index.js';"),
    ).toEqual([]);
  });
});

describe('the HTTP contract (libs/api)', () => {
  it('imports nothing but its own files, and the ledger and the apps may import it', async () => {
    expect((await violations('libs/api/src/example.ts', "import { Quantity } from '@quota/domain';")).join('\n')).toMatch(
      /libs\/api imports nothing/,
    );
    expect((await violations('libs/api/src/example.ts', "import { readFileSync } from 'node:fs';")).join('\n')).toMatch(
      /libs\/api imports nothing/,
    );
    expect(await violations('libs/api/src/example.ts', "export * from './status.js';")).toEqual([]);
    expect(await violations('libs/ledger/src/example.ts', "import type { Page } from '@quota/api';")).toEqual([]);
    expect(await violations('apps/quotactl/src/example.ts', "import type { Page } from '@quota/api';")).toEqual([]);
    expect((await violations('libs/ledger/src/example.ts', "import { Queue } from '@quota/jobs';")).join('\n')).toMatch(
      /only @quota\/domain and @quota\/api/,
    );
  });
});

/**
 * The shape of the source (docs/style.md): no import circles, no loop between the folders of one
 * package, no source file over FILE_LINES_MAX lines, no function over ~80 lines whose comment does
 * not say why (`Length: …`). Tests are measured by their own rules; these hold for the rest.
 */
describe('the shape of the source', () => {
  const root = process.cwd();
  const files = sourceFiles(root);
  const sources = readSources(root, files);
  const graph = importGraph(sources, aliasesOf(root));

  it('reads every source file, and follows relative and alias imports', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(graph.get('libs/ledger/src/write/ledger-commands.ts')).toContain('libs/ledger/src/write/unit-of-work.ts');
    expect(graph.get('libs/ledger/src/write/ledger-commands.ts')).toContain('libs/domain/src/index.ts');
  });

  it('has no import circles', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('has no loops between the folders of a package', () => {
    expect(circles(folderGraph(graph))).toEqual([]);
  });

  it(`has no source file over ${FILE_LINES_MAX} lines`, () => {
    expect(files.filter((file) => lineCount(sources.get(file) ?? '') > FILE_LINES_MAX)).toEqual([]);
  });

  it('has no function over 80 lines without a reason in its comment', () => {
    expect(
      files.flatMap((file) => longFunctions(file, sources.get(file) ?? '')).map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`),
    ).toEqual([]);
  });

  it('finds a circle, a folder loop, a long file and a long function where there is one', () => {
    const made = new Map([
      ['libs/x/src/a/one.ts', new Set(['libs/x/src/b/two.ts'])],
      ['libs/x/src/b/two.ts', new Set(['libs/x/src/b/three.ts'])],
      ['libs/x/src/b/three.ts', new Set(['libs/x/src/a/four.ts'])],
      ['libs/x/src/a/four.ts', new Set<string>()],
    ]);
    expect(circles(made)).toEqual([]);
    expect(circles(folderGraph(made))).toEqual([['libs/x/src/a', 'libs/x/src/b']]);
    made.get('libs/x/src/a/four.ts')?.add('libs/x/src/a/one.ts');
    expect(circles(made)).toEqual([['libs/x/src/a/four.ts', 'libs/x/src/a/one.ts', 'libs/x/src/b/three.ts', 'libs/x/src/b/two.ts']]);
    const text = (n: number): string => `${Array.from({ length: n }, (_, i) => `const x${i} = ${i};`).join('\n')}\n`;
    expect(lineCount(text(FILE_LINES_MAX + 1))).toBe(FILE_LINES_MAX + 1);
    const body = Array.from({ length: 85 }, (_, i) => `  const x${i} = ${i};`).join('\n');
    expect(longFunctions('a.ts', `export function long(): void {\n${body}\n}\n`).map((f) => f.name)).toEqual(['long']);
    expect(longFunctions('a.ts', `const long = (): void => {\n${body}\n};\n`).map((f) => f.name)).toEqual(['long']);
    expect(longFunctions('a.ts', `/**\n * Length: a table reads best whole.\n */\nexport function long(): void {\n${body}\n}\n`)).toEqual(
      [],
    );
  });

  it('resolves imports as the compiler does, and does not count a file importing itself', () => {
    const sources = new Map([
      ['libs/x/src/index.ts', "export * from './a.js';"],
      ['libs/x/src/a.ts', "import { b } from './b.js';\nimport type { c } from '@quota/x';\nexport const a = () => import('./a.js');"],
      ['libs/x/src/b.ts', 'export const b = 1;'],
    ]);
    const made = importGraph(sources, new Map([['@quota/x', 'libs/x/src/index.ts']]));
    expect([...(made.get('libs/x/src/a.ts') ?? [])].sort()).toEqual(['libs/x/src/b.ts', 'libs/x/src/index.ts']);
    expect(circles(made)).toEqual([['libs/x/src/a.ts', 'libs/x/src/index.ts']]);
  });
});
