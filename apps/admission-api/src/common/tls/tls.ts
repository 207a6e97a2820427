import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Server } from 'node:https';
import type { SecureContextOptions } from 'node:tls';
import type { TlsConfig } from '@quota/config';

const CERT_POLL_MS = 5000;

/** The certificate, key and optional client CA, read now (a missing file stops the boot with its name). */
export function secureContextOptions(tls: TlsConfig): SecureContextOptions {
  const read = (file: string, variable: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new Error(`${variable} ${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  };
  return {
    cert: read(tls.certFile, 'TLS_CERT_FILE'),
    key: read(tls.keyFile, 'TLS_KEY_FILE'),
    ...(tls.clientCaFile ? { ca: read(tls.clientCaFile, 'TLS_CLIENT_CA_FILE') } : {}),
  };
}

/** HTTPS server options: client certificates are asked for, and verified, only when a client CA is set. */
export function httpsOptions(tls: TlsConfig): SecureContextOptions & { requestCert: boolean; rejectUnauthorized: boolean } {
  // A missing or unverified client certificate is not a TLS failure: the caller may still
  // authenticate with a bearer token, and the guard answers 401 otherwise.
  return { ...secureContextOptions(tls), requestCert: Boolean(tls.clientCaFile), rejectUnauthorized: false };
}

/**
 * Reloads the certificate and key when either file changes (cert-manager renews in place),
 * without dropping connections. A half-written pair fails to load and keeps the old context.
 */
export function reloadOnChange(server: Server, tls: TlsConfig, log: (level: 'info' | 'error', message: string) => void): () => void {
  const files = [tls.certFile, tls.keyFile, ...(tls.clientCaFile ? [tls.clientCaFile] : [])];
  const reload = (): void => {
    try {
      server.setSecureContext(secureContextOptions(tls));
      log('info', `reloaded the TLS certificate from ${tls.certFile}`);
    } catch (error) {
      log('error', `kept the previous TLS certificate: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  for (const file of files) watchFile(file, { interval: CERT_POLL_MS, persistent: false }, reload);
  return () => files.forEach((file) => unwatchFile(file, reload));
}
