// @ts-check
/**
 * One version, package.json's, and every place that must say the same (a release is a semver tag
 * vX.Y.Z of a commit where they all agree; CHANGELOG.md says what is in it):
 *
 *   package.json, package-lock.json     the version
 *   apps/admission-api/src/app.ts       API_VERSION (the OpenAPI document's)
 *   deploy/kubernetes/base              the image tag (kustomization.yaml newTag, every container's image)
 *   deploy/helm/quota-ledger/Chart.yaml version and appVersion (and its files/, copied by deploy/helm/sync.sh)
 *   plugins/krew/quota.yaml             the krew plugin's version
 *   CHANGELOG.md                        a section for it
 *
 * quotactl's npm package (dist/quotactl/package.json) is written from package.json by
 * apps/quotactl/bundle.mjs, so it cannot disagree.
 *
 *   node scripts/release/version.mjs --check        exit 1, naming each file that disagrees
 *   node scripts/release/version.mjs --set 0.2.0    writes the version everywhere, then checks
 *
 * --root DIR works on another copy of the repository (the test's).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import console from 'node:console';
import { URL, fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const root = option('--root') ?? fileURLToPath(new URL('../../', import.meta.url));
const read = (file) => readFileSync(join(root, file), 'utf8');
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

/** Each place: what it says now, and how to make it say `version`. */
const BASE = 'deploy/kubernetes/base';
const places = [
  json(
    'package.json',
    (p) => p.version,
    (p, v) => (p.version = v),
  ),
  json(
    'package-lock.json',
    (p) => (p.version === p.packages[''].version ? p.version : `${p.version} / ${p.packages[''].version}`),
    (p, v) => ((p.version = v), (p.packages[''].version = v)),
  ),
  text('apps/admission-api/src/app.ts', /export const API_VERSION = '([^']*)';/),
  text(`${BASE}/kustomization.yaml`, /^ {4}newTag: (\S+)$/m),
  ...readdirSync(join(root, BASE))
    .filter((f) => f.endsWith('.yaml') && read(`${BASE}/${f}`).includes('image: quota-ledger:'))
    .map((f) => text(`${BASE}/${f}`, /image: quota-ledger:(\S+)/g)),
  text('deploy/helm/quota-ledger/Chart.yaml', /^version: (\S+)$/m),
  text('deploy/helm/quota-ledger/Chart.yaml', /^appVersion: "([^"]*)"$/m),
  text('plugins/krew/quota.yaml', /^ {2}version: v(\S+)$/m),
  text('plugins/krew/quota.yaml', /\/v([^/\s]+)\/kubectl-quota\.tar\.gz/),
];

function json(file, get, set) {
  return {
    file,
    now: () => String(get(JSON.parse(read(file)))),
    write: (v) => {
      const p = JSON.parse(read(file));
      set(p, v);
      writeFileSync(join(root, file), `${JSON.stringify(p, null, 2)}\n`);
    },
  };
}

function text(file, pattern) {
  const all = pattern.global ? pattern : new RegExp(pattern.source, `${pattern.flags}g`);
  return {
    file,
    now: () => [...new Set([...read(file).matchAll(all)].map((m) => m[1]))].join(' / ') || `nothing matching ${pattern}`,
    write: (v) =>
      writeFileSync(
        join(root, file),
        read(file).replace(all, (match, old) => match.replace(old, v)),
      ),
  };
}

function problems(version) {
  const found = places.filter((p) => p.now() !== version).map((p) => `${p.file}: ${p.now()}, not ${version}`);
  if (!new RegExp(`^## \\[${version.replaceAll('.', '\\.')}\\]`, 'm').test(read('CHANGELOG.md')))
    found.push(`CHANGELOG.md: no section "## [${version}]"`);
  return found;
}

const wanted = option('--set');
if (wanted !== undefined) {
  if (!SEMVER.test(wanted)) throw new Error(`--set ${wanted}: not a semantic version (X.Y.Z)`);
  for (const place of places) place.write(wanted);
  execFileSync(join(root, 'deploy/helm/sync.sh'), { stdio: 'ignore' });
} else if (!args.includes('--check')) {
  console.error('usage: version.mjs --check | --set X.Y.Z [--root DIR]');
  process.exit(2);
}
const version = JSON.parse(read('package.json')).version;
const found = problems(version);
if (found.length > 0) {
  console.error(`version ${version} (package.json) is not what these say:\n${found.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`version ${version}: package.json, the lockfile, the API, the image tags, the chart, the krew manifest and CHANGELOG.md agree`);
