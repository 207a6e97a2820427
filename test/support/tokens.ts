import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestToken {
  readonly name: string;
  readonly token: string;
  readonly roles: readonly string[];
  readonly namespaces?: readonly string[];
  /** Its AdmissionReviews' userInfo is recorded as "on behalf of" (the kube-apiserver's token). */
  readonly trustUserInfo?: boolean;
}

/** Writes a TOKENS_FILE (digests only, as operators write it) into `dir`, or a fresh temporary directory. */
export function writeTokensFile(tokens: readonly TestToken[], dir = mkdtempSync(join(tmpdir(), 'ql-tokens-'))): string {
  const file = join(dir, 'tokens.yaml');
  const entries = tokens.map((t) =>
    [
      `  - name: ${t.name}`,
      `    sha256: "${createHash('sha256').update(t.token).digest('hex')}"`,
      `    roles: [${t.roles.join(', ')}]`,
      ...(t.namespaces ? [`    namespaces: [${t.namespaces.join(', ')}]`] : []),
      ...(t.trustUserInfo === undefined ? [] : [`    trustUserInfo: ${t.trustUserInfo}`]),
    ].join('\n'),
  );
  writeFileSync(file, `tokens:\n${entries.join('\n')}\n`);
  return file;
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
