import { describe, expect, it } from 'vitest';
import { readSources, sourceFiles } from './source-shape.js';

/**
 * One composition of the ledger: every app is a Nest application that imports LedgerModule,
 * which builds the ledger's parts from the configuration once (libs/ledger's ledgerSettings and
 * buildLedgerParts). An app that builds a ledger class by hand gets its own options, and an
 * operator's setting misses it: the reconciler once synced quotas with the built-in
 * QUOTAS_PER_NAMESPACE_MAX while the API used the configured one.
 */
const LEDGER_CLASSES = [
  'LedgerCommands',
  'LedgerClock',
  'ClusterWriter',
  'ClusterQueries',
  'DefinitionQueries',
  'UsageQueries',
  'SharedUsageQueries',
  'AuditQueries',
  'QueueQueries',
  'UsageProjection',
  'ProjectionRunner',
  'ReadPath',
];
const HAND_WIRING = new RegExp(`\\bnew (${LEDGER_CLASSES.join('|')})\\s*\\(|\\bbuildLedgerParts\\s*\\(`, 'g');

/** Where a source builds the ledger by hand: `file: new X(`. */
export function handWiring(sources: ReadonlyMap<string, string>): string[] {
  return [...sources].flatMap(([file, text]) =>
    [...text.matchAll(HAND_WIRING)].map((match) => `${file}: ${match[0].replace(/\s*\($/, '(')}`),
  );
}

/** The apps that run against the ledger, and the module each boots. */
const LEDGER_APPS = [
  ['admission-api', 'apps/admission-api/src/admission-api.module.ts', "LedgerModule.forRoot(config, 'api')"],
  ['projection-worker', 'apps/projection-worker/src/projection-worker.module.ts', 'LedgerModule.forRoot(config,'],
  ['reconciler', 'apps/reconciler/src/reconciler.module.ts', "LedgerModule.forRoot(config, 'reconciler'"],
] as const;

describe('the composition of the ledger', () => {
  const root = process.cwd();
  const production = sourceFiles(root).filter((file) => file.startsWith('apps/') && !file.endsWith('.spec.ts'));
  const sources = readSources(root, production);

  it('no app builds a ledger class by hand: they come from LedgerModule', () => {
    expect(handWiring(sources)).toEqual([]);
  });

  it('the rule bites: a hand-built LedgerCommands or ProjectionRunner is named', () => {
    const built = new Map([
      [
        'apps/reconciler/src/example.ts',
        'const commands = new LedgerCommands(dataSource, {});\nconst runner = new ProjectionRunner (ds, p, {});',
      ],
    ]);
    expect(handWiring(built)).toEqual([
      'apps/reconciler/src/example.ts: new LedgerCommands(',
      'apps/reconciler/src/example.ts: new ProjectionRunner(',
    ]);
  });

  it.each(LEDGER_APPS)('%s is a Nest application on LedgerModule', (app, moduleFile, ledger) => {
    const module = readSources(root, [moduleFile]).get(moduleFile) ?? '';
    expect(module).toContain('@Module(');
    expect(module).toContain(ledger);
    const main = [...sources].filter(([file]) => file.startsWith(`apps/${app}/src/`)).map(([, text]) => text);
    expect(main.some((text) => /NestFactory\.(create|createApplicationContext)\b/.test(text))).toBe(true);
  });
});
