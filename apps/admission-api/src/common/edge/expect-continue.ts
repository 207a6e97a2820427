import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** Set on a request whose client waits for `100 Continue` before it sends its body. */
const EXPECTS_CONTINUE = Symbol('quota-ledger.expects-continue');

/**
 * `Expect: 100-continue` answered only when the body is about to be read: after the caller is
 * authenticated and authorized and the body's size is within bounds (json-body.ts). Node sends
 * `100 Continue` itself as soon as such a request arrives, unless the server handles
 * 'checkContinue': so a stranger was told to send a body that the 401 then refused. Here the
 * request goes to the same listener as any other, marked; a refusal is answered without a `100`
 * (the client then sends nothing, or its body is not read).
 */
export function answerContinueWhenRead(server: Server, listener: (request: IncomingMessage, response: ServerResponse) => void): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    (request as IncomingMessage & { [EXPECTS_CONTINUE]?: boolean })[EXPECTS_CONTINUE] = true;
    listener(request, response);
  });
}

/** Sends `100 Continue` if the client waits for it (once). */
export function writeContinueIfExpected(request: IncomingMessage, response: ServerResponse): void {
  const marked = request as IncomingMessage & { [EXPECTS_CONTINUE]?: boolean };
  if (!marked[EXPECTS_CONTINUE]) return;
  marked[EXPECTS_CONTINUE] = false;
  response.writeContinue();
}
