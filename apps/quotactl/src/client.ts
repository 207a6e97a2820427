import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { STATUS_REASONS, statusReason } from '@quota/api';
import { isStatus, type KubeStatus } from './api-types.js';

export interface ClientOptions {
  /** http(s)://host[:port][/prefix], no trailing slash. */
  readonly server: string;
  readonly token?: string | undefined;
  /** PEM text of the CA to trust instead of the system's. */
  readonly ca?: string | Buffer | undefined;
  readonly insecureSkipTlsVerify?: boolean | undefined;
  /** The whole exchange; 0 waits forever. */
  readonly timeoutMs: number;
  readonly userAgent?: string | undefined;
  /** Called with the text of each `Warning: 299` header of every answer, in order, as kubectl's warning handler is. */
  readonly onWarning?: ((text: string) => void) | undefined;
}

export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON, or the text when the body is not JSON (a proxy's error page). */
  readonly body: unknown;
}

/**
 * No usable answer: nothing listens, the connection broke, DNS failed or the time ran out.
 * Retrying later may help (exit 6).
 */
export class Unavailable extends Error {
  override readonly name = 'Unavailable';
}

/** The TLS handshake failed: a certificate problem that retrying will not fix (exit 1). */
export class TlsError extends Error {
  override readonly name = 'TlsError';
}

/** The server answered with an error: a Status when it is ours, anything when a proxy answered. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }

  get details(): Readonly<Record<string, unknown>> | undefined {
    return isStatus(this.body) ? this.body.details : undefined;
  }
}

/** The largest answer read; a page is at most 1,000 items, far below this. */
const ANSWER_BYTES_MAX = 64 * 1024 * 1024;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
]);

/**
 * JSON over HTTP(S) with Node's own clients, because fetch cannot be given a CA bundle. Follows
 * no redirects (a 3xx is an error: a redirect would carry the token to another place), and
 * bounds the whole exchange by the timeout, not only the idle time.
 */
export class ApiClient {
  constructor(private readonly options: ClientOptions) {}

  /** The bound on one exchange (0: none), so that a long poll asks the server to answer within it. */
  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /** The answer whatever its status; errors only when no answer came. */
  send(method: string, path: string, body?: unknown, query?: Readonly<Record<string, string | undefined>>): Promise<Answer> {
    const target = new URL(`${this.options.server}${path}`);
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) target.searchParams.set(key, value);
    const https = target.protocol === 'https:';
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const timeoutMs = this.options.timeoutMs;

    return new Promise<Answer>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        outcome();
      };
      const req = (https ? httpsRequest : httpRequest)(
        target,
        {
          method,
          headers: {
            accept: 'application/json',
            'user-agent': this.options.userAgent ?? 'quotactl',
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
            ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
          },
          ...(https
            ? { ...(this.options.ca ? { ca: this.options.ca } : {}), rejectUnauthorized: this.options.insecureSkipTlsVerify !== true }
            : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > ANSWER_BYTES_MAX)
              req.destroy(new Unavailable(`the answer from ${target.origin} is larger than ${ANSWER_BYTES_MAX} bytes`));
            else chunks.push(chunk);
          });
          res.on('end', () =>
            finish(() => {
              // Each Warning header on its own: Node joins repeated ones with ", ", which a quoted text may hold too.
              for (const text of warningTexts(rawHeaderValues(res.rawHeaders, 'warning'))) this.options.onWarning?.(text);
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parseBody(Buffer.concat(chunks).toString('utf8')) });
            }),
          );
          res.on('error', (error) => finish(() => reject(connectionError(error, target))));
        },
      );
      if (timeoutMs > 0)
        timer = setTimeout(
          () => req.destroy(new Unavailable(`no answer from ${target.origin} within ${formatMs(timeoutMs)} (--request-timeout)`)),
          timeoutMs,
        );
      req.on('error', (error) => finish(() => reject(connectionError(error, target))));
      req.end(payload);
    });
  }

  /** The answer's body when it is a success (2xx); an ApiError otherwise. */
  async call<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    query?: Readonly<Record<string, string | undefined>>,
  ): Promise<{ status: number; body: T }> {
    const answer = await this.send(method, path, body, query);
    if (answer.status >= 200 && answer.status < 300) return { status: answer.status, body: answer.body as T };
    throw apiError(answer);
  }
}

/** The values of every header of this name, each as sent (rawHeaders alternates names and values). */
function rawHeaderValues(raw: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) values.push(raw[i + 1] ?? '');
  return values;
}

/**
 * The texts of `Warning` headers as client-go reads them (ParseWarningHeaders): each header a
 * comma-separated list of `code SP agent SP "quoted text" [SP "date"]` (RFC 7234 §5.5); only code
 * 299 with a non-empty text is a warning for the user. A malformed value ends its header's list.
 */
export function warningTexts(headers: readonly string[]): string[] {
  const texts: string[] = [];
  for (const header of headers) {
    let rest = header;
    for (;;) {
      rest = rest.replace(/^[ \t]+/, '');
      if (rest === '') break;
      const head = /^(\d{3}) +([^ \t",]+) +"/.exec(rest);
      if (!head) break;
      const quoted = quotedString(rest.slice(head[0].length - 1));
      if (!quoted) break;
      rest = quoted.rest;
      // An optional warn-date, itself quoted.
      const date = /^ +"/.exec(rest);
      if (date) {
        const skipped = quotedString(rest.slice(date[0].length - 1));
        if (!skipped) break;
        rest = skipped.rest;
      }
      if (head[1] === '299' && quoted.text !== '') texts.push(quoted.text);
      rest = rest.replace(/^[ \t]+/, '');
      if (rest === '') break;
      if (!rest.startsWith(',')) break;
      rest = rest.slice(1);
    }
  }
  return texts;
}

/** A quoted-string at the start of `text` (with `\` escapes), and what follows it. */
function quotedString(text: string): { text: string; rest: string } | undefined {
  if (!text.startsWith('"')) return undefined;
  let out = '';
  for (let i = 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      i++;
      if (i >= text.length) return undefined;
      out += text[i];
    } else if (c === '"') return { text: out, rest: text.slice(i + 1) };
    else out += c;
  }
  return undefined;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** kubectl's words for the ways a connection fails, so the message says what to check. */
function connectionError(error: Error, target: URL): Error {
  if (error instanceof Unavailable || error instanceof TlsError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code === 'ECONNREFUSED')
    return new Unavailable(`the connection to the server ${target.host} was refused - did you specify the right host or port?`);
  if (NETWORK_CODES.has(code)) return new Unavailable(`unable to connect to the server ${target.host}: ${error.message}`);
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/i.test(code) || /certificate|ssl|tls/i.test(error.message)) {
    return new TlsError(
      `unable to connect to the server ${target.host}: ${error.message} (pass --certificate-authority with the CA that signed its certificate)`,
    );
  }
  return new Unavailable(`unable to connect to the server ${target.host}: ${error.message}`);
}

/** An error answer as an ApiError: the Status's reason and message, or kubectl's words for a bare one. */
export function apiError(answer: Answer): ApiError {
  if (isStatus(answer.body)) {
    const status: KubeStatus = answer.body;
    return new ApiError(answer.status, status.reason || STATUS_REASONS[answer.status] || '', status.message ?? '', answer.body);
  }
  if (answer.status >= 300 && answer.status < 400) {
    const location = typeof answer.headers.location === 'string' ? ` to ${answer.headers.location}` : '';
    return new ApiError(
      answer.status,
      '',
      `the server answered ${answer.status} (a redirect${location}); quotactl follows no redirects: check --server`,
      answer.body,
    );
  }
  const reason = statusReason(answer.status);
  const text = typeof answer.body === 'string' ? answer.body.trim() : JSON.stringify(answer.body ?? '');
  const snippet = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  const message =
    answer.status >= 500
      ? `an error on the server (${JSON.stringify(snippet)}) has prevented the request from succeeding`
      : `the server answered ${answer.status}${snippet ? `: ${snippet}` : ''}`;
  return new ApiError(answer.status, reason, message, answer.body);
}
