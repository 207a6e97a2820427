#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { cliEnvironment } from '@quota/config';
import { run } from './cli.js';
import { packageVersion } from './version.js';

// `quotactl … | head` closes the pipe early; that is the reader's choice, not an error to report.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

process.exitCode = await run(process.argv.slice(2), {
  stdout: (chunk) => void process.stdout.write(chunk),
  stderr: (chunk) => void process.stderr.write(chunk),
  readFile: (path) => readFile(path, 'utf8'),
  readStdin: () => text(process.stdin),
  cwd: process.cwd(),
  env: cliEnvironment(),
  now: () => Date.now(),
  version: await packageVersion(),
});
