// @ts-check
/**
 * Prettier on the code files this branch changed against main (`npm run format` writes them,
 * `npm run lint` checks them). Only those for now: other branches are in flight, and the whole
 * tree is formatted once, in a commit of its own, with `npm run format:all`; after that the check
 * can cover every file.
 *
 * main is the local branch `main`, else `origin/main`; with neither (a clone of main alone, as
 * CI's) there is no change to check.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import process from 'node:process';
import console from 'node:console';

const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const mode = process.argv[2] === '--write' ? '--write' : '--check';

const git = (...args) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
const base = ['main', 'origin/main'].find((ref) => {
  try {
    git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
    return true;
  } catch {
    return false;
  }
});
if (!base) {
  console.log('format: no main branch here, so no change to check');
  process.exit(0);
}
const since = git('merge-base', 'HEAD', base);
// Added and modified files; a file moved (renamed, with or without edits) is left as it was, so
// that the move stays a move for the branches in flight, until the one-time format.
const changed = [
  ...git('diff', '--name-only', '--find-renames', '--diff-filter=ACM', since).split('\n'),
  ...git('ls-files', '--others', '--exclude-standard').split('\n'),
];
const inBase = (file) => {
  try {
    git('cat-file', '-e', `${since}:${file}`);
    return true;
  } catch {
    return false;
  }
};
// A test that was there already keeps its text (only its imports may follow moved code) until the one-time format.
const files = [...new Set(changed)].filter(
  (file) => CODE.test(file) && existsSync(file) && !(/\.(spec|test)\.ts$/.test(file) && inBase(file)),
);
if (files.length === 0) {
  console.log(`format: no code file changed since ${base}`);
  process.exit(0);
}
const prettier = spawnSync(process.execPath, ['node_modules/prettier/bin/prettier.cjs', mode, '--ignore-unknown', ...files], {
  stdio: 'inherit',
});
if (prettier.status !== 0 && mode === '--check') console.error(`format: run \`npm run format\` (these files changed since ${base})`);
process.exit(prettier.status ?? 1);
