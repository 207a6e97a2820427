import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Answer } from './api.js';

/**
 * JSON over HTTPS with a CA of the test's own (fetch takes no CA without undici's dispatcher):
 * the answer as test/support/api.ts's `request` gives it, the body parsed when it is JSON.
 */
export function httpsJson(
  url: string,
  options: { method?: string; body?: unknown; headers?: Record<string, string>; ca: Buffer | string; timeoutMs?: number },
): Promise<Answer> {
  const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    // Plain http too (the worker's and reconciler's /healthz): the CA is then unused.
    const request = url.startsWith('http:') ? httpRequest : httpsRequest;
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        ca: options.ca,
        timeout: options.timeoutMs ?? 30_000,
        headers: {
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
          resolve(Object.defineProperty({ status: res.statusCode ?? 0, body }, 'headers', { value: headers, enumerable: false }) as Answer);
        });
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${options.method ?? 'GET'} ${url}: no answer within ${options.timeoutMs ?? 30_000} ms`)),
    );
    req.on('error', reject);
    req.end(payload);
  });
}
