/** A Kubernetes Status from the API, or a network failure, as one error the page can show. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'quota-ledger.token';
/** A request that hangs is reported, not waited on forever. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The token lives in session storage: entered once per tab session, gone when the tab
 * closes, never in a cookie (so no other site can make the browser send it) and never in
 * the URL (so it is not in history or logs).
 */
export const tokenStore = {
  get: (): string | undefined => sessionStorage.getItem(TOKEN_KEY) ?? undefined,
  set: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** A JSON request to the API with the tab's token; a non-2xx answer is thrown as an ApiError with the Status's message. */
export async function api<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
  const text = await request(method, path, 'application/json', body);
  try {
    return (text === '' ? undefined : JSON.parse(text)) as T;
  } catch {
    throw new ApiError(0, `${method} ${path}: the answer is not JSON`);
  }
}

/** A GET whose answer is text (an NDJSON export), with the tab's token. */
export const apiText = (path: string): Promise<string> => request('GET', path, 'application/x-ndjson, application/json');

async function request(method: 'GET' | 'POST' | 'PUT', path: string, accept: string, body?: unknown): Promise<string> {
  const token = tokenStore.get();
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: {
        accept,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    throw new ApiError(
      0,
      timedOut
        ? `${method} ${path} took longer than ${REQUEST_TIMEOUT_MS / 1000} s`
        : `cannot reach the service: ${(error as Error).message}`,
    );
  }
  const text = await response.text();
  if (!response.ok) {
    let status: { message?: string; reason?: string } | undefined;
    try {
      status = JSON.parse(text) as typeof status;
    } catch {
      status = undefined;
    }
    throw new ApiError(response.status, status?.message ?? `${method} ${path}: HTTP ${response.status}`, status?.reason);
  }
  return text;
}

export const enc = encodeURIComponent;
