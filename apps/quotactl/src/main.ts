#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { text } from 'node:stream/consumers';
import { cliEnvironment } from '@quota/config';
import { run } from './cli.js';
import { defaultKubeconfigFiles } from './kubeconfig.js';
import { packageVersion } from './version.js';

// `quotactl … | head` closes the pipe early; that is the reader's choice, not an error to report.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

/**
 * kubectl (1.26+) completes `kubectl quota …` by running `kubectl_complete-quota WORD…` from
 * PATH; the npm package links that name to this same file, which then answers as `__complete`.
 */
const completing = basename(process.argv[1] ?? '').startsWith('kubectl_complete-');

// No top-level await: the single-file bundle (bundle.mjs) is CommonJS, which has none.
async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  process.exitCode = await run(completing ? ['__complete', ...argv] : argv, {
    stdout: (chunk) => void process.stdout.write(chunk),
    stderr: (chunk) => void process.stderr.write(chunk),
    readFile: (path) => readFile(path, 'utf8'),
    readStdin: () => text(process.stdin),
    cwd: process.cwd(),
    env: cliEnvironment(),
    now: () => Date.now(),
    version: await packageVersion(),
    kubeconfigFiles: defaultKubeconfigFiles(process.env),
  });
}

void main();
