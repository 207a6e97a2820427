// @ts-check
/**
 * quotactl as one file that needs nothing but Node (20.19 or newer): `npm run build:quotactl`
 * writes dist/quotactl/, a package of its own:
 *
 *   kubectl-quota   the CLI with its dependencies (yaml, the libs) bundled in, a shebang and
 *                   mode 755: copy it onto PATH and it is `kubectl quota …` (a kubectl plugin)
 *   package.json    bin entries quotactl, kubectl-quota and kubectl_complete-quota (kubectl's
 *                   completion hook for the plugin), all this one file, so `npm pack` /
 *                   `npm publish` of the directory ships it
 *   LICENSE         the project's
 *
 * CommonJS on purpose: a file without an extension is CommonJS to Node wherever it lands (ESM
 * would need a .mjs name, and kubectl finds plugins by their exact name).
 */
import { build } from 'esbuild';
import { chmod, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { URL, fileURLToPath } from 'node:url';

const root = new URL('../../', import.meta.url);
const out = new URL('dist/quotactl/', root);
const project = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));
const file = 'kubectl-quota';

await mkdir(out, { recursive: true });
await build({
  entryPoints: [fileURLToPath(new URL('apps/quotactl/src/main.ts', root))],
  outfile: fileURLToPath(new URL(file, out)),
  tsconfig: fileURLToPath(new URL('tsconfig.json', root)),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20.19',
  // main.ts's own `#!/usr/bin/env node` is kept by esbuild as the first line.
  define: { __QUOTACTL_VERSION__: JSON.stringify(project.version) },
  // version.ts reads import.meta.url only when __QUOTACTL_VERSION__ is not set, which here it is.
  logOverride: { 'empty-import-meta': 'silent' },
  legalComments: 'eof',
  logLevel: 'warning',
});
await chmod(new URL(file, out), 0o755);

const manifest = {
  name: '@quota-ledger/quotactl',
  version: project.version,
  description: 'quotactl: the quota-ledger CLI, also a kubectl plugin (kubectl quota). One file, no dependencies.',
  license: project.license,
  engines: project.engines,
  bin: { quotactl: file, 'kubectl-quota': file, 'kubectl_complete-quota': file },
  files: [file, 'LICENSE'],
};
await writeFile(new URL('package.json', out), `${JSON.stringify(manifest, null, 2)}\n`);
await copyFile(new URL('LICENSE', root), new URL('LICENSE', out));
