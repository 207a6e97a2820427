#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { loadCliDefaults } from '@quota/config';
import { run } from './cli.js';

const devToken = (): string | undefined => {
  try {
    return readFileSync('.quota-ledger/dev-token', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};

process.exitCode = await run(
  process.argv.slice(2),
  {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readFile: (path) => readFileSync(path, 'utf8'),
    readStdin: () => readFileSync(0, 'utf8'),
    devToken,
    now: () => Date.now(),
  },
  loadCliDefaults(),
);
