import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadConfig } from '@quota/config';
import { archiveLedger, ArchiveRefused, openDataSource } from '@quota/ledger';

/**
 * `npm run ledger:archive -- --before=2026-01-01 --dir=/backups/ledger [--drop] [--dry-run]`:
 * exports every monthly partition of ledger_events whose month ends at or before `--before` as
 * NDJSON into `--dir`, checks it, detaches the partition and records the new retention horizon
 * (libs/ledger/src/archive/ledger-archive.ts; README, "Retention and archiving"). `--drop` then drops
 * each detached table once its file reads back right. An operator's step, like `npm run migrate`:
 * it needs DATABASE_URL with the rights of the ledger's owner.
 */
const USAGE =
  'usage: npm run ledger:archive -- --before=<RFC 3339, at most the start of this month> --dir=<directory> [--drop] [--dry-run]';

const config = loadConfig();
if (!config.databaseUrl) {
  console.error('DATABASE_URL is not set: nothing to archive');
  process.exit(2);
}
let args: { before?: string; dir?: string; drop?: boolean; 'dry-run'?: boolean };
try {
  args = parseArgs({
    options: { before: { type: 'string' }, dir: { type: 'string' }, drop: { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
    strict: true,
  }).values;
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  process.exit(2);
}
if (!args.before || (!args.dir && !args['dry-run'])) {
  console.error(USAGE);
  process.exit(2);
}

const dataSource = await openDataSource({ url: config.databaseUrl, poolSize: 2, applicationName: 'quota-ledger-archive' });
try {
  const report = await archiveLedger(dataSource, {
    before: args.before,
    directory: args.dir ?? '.',
    drop: args.drop === true,
    dryRun: args['dry-run'] === true,
    log: (message) => console.log(message),
  });
  if (args['dry-run']) {
    for (const p of report.planned) console.log(`would archive ${p.partition} [${p.rangeStart}, ${p.rangeEnd}): ${p.events} events`);
    if (report.planned.length === 0) console.log(`no partition ends at or before ${args.before}`);
  } else if (report.archived.length === 0 && report.dropped.length === 0) {
    console.log(`nothing to archive: no partition ends at or before ${args.before}`);
  }
  const horizon = args['dry-run'] ? 'the retention horizon would be' : 'retention horizon:';
  console.log(report.horizon ? `${horizon} ${report.horizon} (usage before it answers 410)` : 'retention horizon: none (nothing archived)');
} catch (error) {
  // A refusal explains itself; anything else is a failure whose transaction was rolled back.
  console.error(
    error instanceof ArchiveRefused
      ? error.message
      : `archive failed: ${error instanceof Error ? error.message : String(error)} (the partition it was on is unchanged; those reported above are archived)`,
  );
  process.exitCode = 1;
} finally {
  await dataSource.destroy();
}
