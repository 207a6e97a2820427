/**
 * quotactl's connection settings, resolved as kubectl resolves its own: a flag wins over a
 * QUOTA_LEDGER_* variable, which wins over the default. Pure apart from `cliEnvironment`: the
 * environment and the development token's text come in as arguments, so the CLI reads files
 * itself and its tests need no process environment.
 */

import { VARIABLES } from './variables.js';

/** Where `npm start` serves the API, so a development checkout needs no flags at all. */
export const CLI_DEFAULT_SERVER: string = VARIABLES.QUOTA_LEDGER_SERVER.default;
export const CLI_DEFAULT_REQUEST_TIMEOUT_SECONDS = Number(VARIABLES.QUOTA_LEDGER_REQUEST_TIMEOUT.default);
/** The file, relative to the working directory, in which `npm start` keeps its development token. */
export const CLI_DEV_TOKEN_FILE = '.quota-ledger/dev-token';

export type CliTokenSource = 'flag' | 'environment' | 'dev-token';

export interface CliConfig {
  /** http(s)://host[:port][/prefix], without a trailing slash. */
  readonly server: string;
  readonly token: string | undefined;
  /** Where the token came from, so a 401 can say which one was refused. */
  readonly tokenSource: CliTokenSource | undefined;
  /** PEM file of the CA that signed the server's certificate; the system's CAs otherwise. */
  readonly caFile: string | undefined;
  readonly insecureSkipTlsVerify: boolean;
  /** The whole exchange (connect, send, answer); 0 waits forever, as kubectl's `--request-timeout=0`. */
  readonly requestTimeoutMs: number;
}

/** The command-line flags that override the environment; undefined means "not given". */
export interface CliFlags {
  readonly server?: string | undefined;
  readonly token?: string | undefined;
  readonly certificateAuthority?: string | undefined;
  readonly insecureSkipTlsVerify?: boolean | undefined;
  readonly requestTimeout?: string | undefined;
}

/** A setting that cannot be used; `source` names the flag or variable it came from. */
export class CliConfigError extends Error {
  constructor(
    readonly source: string,
    message: string,
  ) {
    super(`${source}: ${message}`);
    this.name = 'CliConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * @param env the QUOTA_LEDGER_* variables (see `cliEnvironment`)
 * @param devToken the text of `.quota-ledger/dev-token` in the working directory, if it exists;
 *   used only when neither `--token` nor QUOTA_LEDGER_TOKEN gives one
 */
export function loadCliConfig(env: Env, flags: CliFlags, devToken?: string): CliConfig {
  const server = serverUrl(
    flags.server !== undefined ? '--server' : 'QUOTA_LEDGER_SERVER',
    flags.server ?? (env['QUOTA_LEDGER_SERVER'] || CLI_DEFAULT_SERVER),
  );

  const [token, tokenSource] = resolveToken(env, flags, devToken);

  const caFile = flags.certificateAuthority ?? (env['QUOTA_LEDGER_CA_FILE'] || undefined);
  if (caFile === '') throw new CliConfigError('--certificate-authority', 'must name a file');
  const insecureSkipTlsVerify = flags.insecureSkipTlsVerify === true;
  if (insecureSkipTlsVerify && caFile !== undefined) {
    // kubectl refuses the pair too: trusting a CA and trusting anything contradict each other.
    throw new CliConfigError('--insecure-skip-tls-verify', 'specifying a root certificates file with the insecure flag is not allowed');
  }

  const timeoutSource = flags.requestTimeout !== undefined ? '--request-timeout' : 'QUOTA_LEDGER_REQUEST_TIMEOUT';
  const timeoutText = flags.requestTimeout ?? (env['QUOTA_LEDGER_REQUEST_TIMEOUT'] || undefined);
  const requestTimeoutMs =
    timeoutText === undefined ? CLI_DEFAULT_REQUEST_TIMEOUT_SECONDS * 1000 : parseTimeout(timeoutSource, timeoutText);

  return { server, token, tokenSource, caFile, insecureSkipTlsVerify, requestTimeoutMs };
}

/**
 * A copy of the QUOTA_LEDGER_* variables of this process: the one place quotactl reads the
 * environment (only libs/config may), so everything downstream takes a plain record.
 */
export function cliEnvironment(): Record<string, string | undefined> {
  const copy: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(process.env)) if (name.startsWith('QUOTA_LEDGER_')) copy[name] = value;
  return copy;
}

function resolveToken(env: Env, flags: CliFlags, devToken: string | undefined): [string | undefined, CliTokenSource | undefined] {
  if (flags.token !== undefined) {
    if (flags.token === '') throw new CliConfigError('--token', 'must not be empty');
    return [headerSafe('--token', flags.token), 'flag'];
  }
  const fromEnv = env['QUOTA_LEDGER_TOKEN'];
  if (fromEnv) return [headerSafe('QUOTA_LEDGER_TOKEN', fromEnv), 'environment'];
  const fromFile = devToken?.trim();
  if (fromFile) return [headerSafe(CLI_DEV_TOKEN_FILE, fromFile), 'dev-token'];
  return [undefined, undefined];
}

/** A token goes into an HTTP header: whitespace or control characters would split or corrupt it. */
function headerSafe(source: string, token: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\s\u0000-\u001f\u007f]/.test(token)) throw new CliConfigError(source, 'a token must not contain whitespace or control characters');
  return token;
}

function serverUrl(source: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliConfigError(
      source,
      `${JSON.stringify(raw)} is not a URL (e.g. https://quota-ledger.example.com or http://127.0.0.1:8080)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliConfigError(source, `must be an http:// or https:// URL, got ${url.protocol}`);
  // A password in the URL would be sent nowhere (the token is the credential) and shows up in every error message.
  if (url.username || url.password) throw new CliConfigError(source, 'must not contain user info: pass the token with --token');
  if (url.search || url.hash) throw new CliConfigError(source, 'must not contain a query or a fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

const TIMEOUT_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Seconds (`30`, `2.5`) or a duration with a unit as kubectl takes it (`500ms`, `30s`, `2m`, `1h`); 0 disables it. */
function parseTimeout(source: string, raw: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?$/.exec(raw.trim());
  if (!match?.[1])
    throw new CliConfigError(
      source,
      `${JSON.stringify(raw)} is not a duration: give seconds (30) or a number with a unit (500ms, 30s, 2m, 1h); 0 waits forever`,
    );
  const value = Number(match[1]);
  // A positive value never rounds down to 0, which would mean "forever".
  const ms = value === 0 ? 0 : Math.max(1, Math.round(value * (TIMEOUT_UNITS[match[2] ?? 's'] ?? 1000)));
  // Node's timers hold at most 2^31-1 ms; anything longer is "forever" for a CLI anyway.
  if (ms > 2_147_483_647) throw new CliConfigError(source, 'must be at most 596h (or 0 to wait forever)');
  return ms;
}
