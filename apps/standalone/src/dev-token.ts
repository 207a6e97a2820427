import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface DevToken {
  readonly token: string;
  /** The tokens file (digest only) the API is started with. */
  readonly tokensFile: string;
  /** Where the token itself is kept for `quotactl` run from the project directory. */
  readonly tokenFile: string;
}

/**
 * The development token of the zero-setup start: made once, kept in the git-ignored state
 * directory (mode 0600), holding every role. The API still checks it like any other token.
 */
export function ensureDevToken(dataDir: string): DevToken {
  // With DATABASE_URL set nothing else has made the state directory.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const tokenFile = resolve(join(dataDir, 'dev-token'));
  const tokensFile = resolve(join(dataDir, 'tokens.yaml'));
  if (!existsSync(tokenFile)) writeFileSync(tokenFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const token = readFileSync(tokenFile, 'utf8').trim();
  const digest = createHash('sha256').update(token, 'utf8').digest('hex');
  writeFileSync(
    tokensFile,
    `# Written by the zero-setup start (npm start) for the token in ./dev-token. Development only.\ntokens:\n  - name: developer\n    sha256: "${digest}"\n    roles: [admin, admission, auditor, webhook]\n`,
    { mode: 0o600 },
  );
  return { token, tokensFile, tokenFile };
}
