import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface ClientOptions {
  readonly server: string;
  readonly token: string | undefined;
  readonly ca: Buffer | undefined;
  readonly insecureSkipTlsVerify: boolean;
  readonly timeoutMs: number;
}

export interface Answer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the server's JSON, read by each command
  readonly body: any;
}

/** The server did not answer (connection refused, TLS failure, timeout). */
export class Unreachable extends Error {}

const ANSWER_BYTES_MAX = 64 * 1024 * 1024;

/**
 * JSON over HTTP(S) with node's own clients (fetch cannot take a CA bundle), a timeout on
 * the whole exchange and no redirects.
 */
export function call(options: ClientOptions, method: string, path: string, body?: unknown): Promise<Answer> {
  const target = new URL(path, options.server.endsWith('/') ? options.server : `${options.server}/`);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method,
        timeout: options.timeoutMs,
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
        ...(target.protocol === 'https:' ? { ca: options.ca, rejectUnauthorized: !options.insecureSkipTlsVerify } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > ANSWER_BYTES_MAX) req.destroy(new Unreachable(`the answer is larger than ${ANSWER_BYTES_MAX} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', (error) => reject(new Unreachable(error.message)));
      },
    );
    req.on('timeout', () => req.destroy(new Unreachable(`no answer from ${target.origin} within ${options.timeoutMs} ms`)));
    req.on('error', (error) => reject(error instanceof Unreachable ? error : new Unreachable(`cannot reach ${target.origin}: ${error.message}`)));
    req.end(payload);
  });
}
