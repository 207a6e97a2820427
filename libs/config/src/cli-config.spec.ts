import { describe, expect, it } from 'vitest';
import { CliConfigError, cliEnvironment, loadCliConfig } from './cli-config.js';

describe('loadCliConfig', () => {
  it('talks to the zero-setup start on 127.0.0.1:8080 with a 30 s timeout when nothing is set', () => {
    expect(loadCliConfig({}, {})).toEqual({
      server: 'http://127.0.0.1:8080',
      token: undefined,
      tokenSource: undefined,
      caFile: undefined,
      insecureSkipTlsVerify: false,
      requestTimeoutMs: 30_000,
    });
  });

  it('takes QUOTA_LEDGER_* variables, and flags over them', () => {
    const env = {
      QUOTA_LEDGER_SERVER: 'https://ql.example.com/',
      QUOTA_LEDGER_TOKEN: 'env-token',
      QUOTA_LEDGER_CA_FILE: '/etc/ca.pem',
      QUOTA_LEDGER_REQUEST_TIMEOUT: '5',
    };
    expect(loadCliConfig(env, {})).toMatchObject({
      server: 'https://ql.example.com',
      token: 'env-token',
      tokenSource: 'environment',
      caFile: '/etc/ca.pem',
      requestTimeoutMs: 5000,
    });
    expect(
      loadCliConfig(env, {
        server: 'http://other:9000/prefix/',
        token: 'flag-token',
        certificateAuthority: 'ca2.pem',
        requestTimeout: '2m',
      }),
    ).toMatchObject({
      server: 'http://other:9000/prefix',
      token: 'flag-token',
      tokenSource: 'flag',
      caFile: 'ca2.pem',
      requestTimeoutMs: 120_000,
    });
  });

  it("falls back to npm start's development token, trimmed, only when no token is given", () => {
    expect(loadCliConfig({}, {}, 'abc123\n')).toMatchObject({ token: 'abc123', tokenSource: 'dev-token' });
    expect(loadCliConfig({ QUOTA_LEDGER_TOKEN: 'env' }, {}, 'abc123\n')).toMatchObject({ token: 'env', tokenSource: 'environment' });
    expect(loadCliConfig({}, { token: 'flag' }, 'abc123')).toMatchObject({ token: 'flag', tokenSource: 'flag' });
    expect(loadCliConfig({ QUOTA_LEDGER_TOKEN: '' }, {}, '  \n')).toMatchObject({ token: undefined, tokenSource: undefined });
  });

  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['1.5', 1500],
    ['1h', 3_600_000],
    ['0', 0],
  ])('reads --request-timeout %s as %i ms', (raw, ms) => {
    expect(loadCliConfig({}, { requestTimeout: raw }).requestTimeoutMs).toBe(ms);
  });

  it.each([
    [{ server: 'ftp://x' }, /--server: must be an http/],
    [{ server: 'not a url' }, /--server: "not a url" is not a URL/],
    [{ server: 'http://user:pw@host' }, /user info/],
    [{ server: 'http://host/?x=1' }, /query/],
    [{ requestTimeout: '10 minutes' }, /--request-timeout: .* is not a duration/],
    [{ requestTimeout: '-1' }, /is not a duration/],
    [{ token: '' }, /--token: must not be empty/],
    [{ token: 'a b' }, /whitespace/],
    [{ certificateAuthority: 'ca.pem', insecureSkipTlsVerify: true }, /insecure flag is not allowed/],
  ])('refuses %j, naming the flag', (flags, message) => {
    expect(() => loadCliConfig({}, flags)).toThrow(CliConfigError);
    expect(() => loadCliConfig({}, flags)).toThrow(message);
  });

  it('names the variable when the environment holds the bad value', () => {
    expect(() => loadCliConfig({ QUOTA_LEDGER_SERVER: 'localhost:8080' }, {})).toThrow(/^QUOTA_LEDGER_SERVER: /);
    expect(() => loadCliConfig({ QUOTA_LEDGER_REQUEST_TIMEOUT: 'soon' }, {})).toThrow(/^QUOTA_LEDGER_REQUEST_TIMEOUT: /);
  });
});

describe('cliEnvironment', () => {
  it('copies the QUOTA_LEDGER_* variables and nothing else', () => {
    const env = cliEnvironment();
    expect(Object.keys(env).every((name) => name.startsWith('QUOTA_LEDGER_'))).toBe(true);
    env['QUOTA_LEDGER_SERVER'] = 'http://changed';
    expect(cliEnvironment()['QUOTA_LEDGER_SERVER']).not.toBe('http://changed');
  });
});
