import { describe, expect, it } from 'vitest';
import { sha256Hex, TokenSet } from './tokens.js';

const file = (body: string): string => `tokens:\n${body}`;
const entry = (name: string, token: string, extra = ''): string =>
  `  - name: ${name}\n    sha256: "${sha256Hex(token)}"\n    roles: [admin]\n${extra}`;

describe('tokens file', () => {
  it('finds the principal of each token, and none for a token that is not listed', () => {
    const set = TokenSet.parse(file(entry('a', 'token-a') + entry('b', 'token-b', '    namespaces: [team-b]\n')), 'f');
    expect(set.authenticate('token-a')?.name).toBe('a');
    const b = set.authenticate('token-b');
    expect(b?.name).toBe('b');
    expect(b?.namespaces).toEqual(new Set(['team-b']));
    expect(set.authenticate('token-c')).toBeUndefined();
    expect(set.authenticate('')).toBeUndefined();
  });

  it.each([
    ['not YAML', 'tokens: [', /is not valid YAML/],
    ['no list', 'tokens: []', /non-empty `tokens:` list/],
    [
      'a token in the clear',
      file('  - name: a\n    sha256: my-secret-token\n    roles: [admin]\n'),
      /tokens\[0\]\.sha256 must be 64 lowercase hex digits/,
    ],
    ['an unknown role', file(`  - name: a\n    sha256: "${sha256Hex('x')}"\n    roles: [root]\n`), /tokens\[0\]\.roles must be/],
    ['no roles', file(`  - name: a\n    sha256: "${sha256Hex('x')}"\n    roles: []\n`), /tokens\[0\]\.roles must be/],
    ['a bad namespace', file(entry('a', 'x', '    namespaces: [Team_A]\n')), /tokens\[0\]\.namespaces/],
    ['a name twice', file(entry('a', 'x') + entry('a', 'y')), /tokens\[1\]\.name "a" appears twice/],
    ['a token twice', file(entry('a', 'x') + entry('b', 'x')), /tokens\[1\]: the same token is listed twice/],
    ['a misspelt field', file(entry('a', 'x', '    namespace: [a]\n')), /unknown field "namespace"/],
  ])('refuses %s, naming the file and the entry', (_what, text, message) => {
    expect(() => TokenSet.parse(text, '/etc/quota-ledger/tokens.yaml')).toThrow(message);
    expect(() => TokenSet.parse(text, '/etc/quota-ledger/tokens.yaml')).toThrow(/^tokens file \/etc\/quota-ledger\/tokens\.yaml: /);
  });
});
