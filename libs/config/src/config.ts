/**
 * The environment, read once at boot into a typed object. Only this lib reads
 * `process.env`; a bad value stops the process with a message naming the variable.
 */
export interface AppConfig {
  /** HTTP port of the admission API. */
  readonly port: number;
  readonly host: string;
  /** PostgreSQL connection string; undefined means the embedded default (a later issue). */
  readonly databaseUrl: string | undefined;
  /** Redis connection string for BullMQ; undefined means BullMQ's PostgreSQL backend. */
  readonly redisUrl: string | undefined;
  /** Largest request body accepted, in bytes (Kubernetes accepts requests of ~3 MiB). */
  readonly bodyLimitBytes: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** PostgreSQL connections this process may hold (throughput peaks at 4–16 on 2 cores). */
  readonly databasePoolSize: number;
  /** Most admissions for one namespace decided together in one transaction. */
  readonly admissionBatchMax: number;
  /** Attempts of one admission transaction (serialization conflicts) before answering 503. */
  readonly admissionRetryMax: number;
  /** Longest any ledger statement may run, in milliseconds. */
  readonly statementTimeoutMs: number;
  /** Longest TTL a REST reservation may ask for, in seconds. */
  readonly reservationTtlMaxSeconds: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`invalid configuration: ${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

export const DEFAULT_BODY_LIMIT_BYTES = 3 * 1024 * 1024 + 64 * 1024;

export function loadConfig(env: Env = process.env): AppConfig {
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env['HOST'] || '0.0.0.0',
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', DEFAULT_BODY_LIMIT_BYTES, 1024, 64 * 1024 * 1024),
    logLevel: oneOf(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 8, 1, 200),
    admissionBatchMax: integer(env, 'ADMISSION_BATCH_MAX', 64, 1, 1000),
    admissionRetryMax: integer(env, 'ADMISSION_RETRY_MAX', 12, 1, 100),
    statementTimeoutMs: integer(env, 'STATEMENT_TIMEOUT_MS', 5000, 100, 600_000),
    reservationTtlMaxSeconds: integer(env, 'RESERVATION_TTL_MAX_SECONDS', 7 * 24 * 3600, 1, 365 * 24 * 3600),
  };
}
