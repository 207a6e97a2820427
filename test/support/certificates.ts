import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  readonly dir: string;
  readonly caCert: string;
  /** Issues a certificate signed by the test CA; returns the cert and key file paths. */
  issue(name: string, options: { commonName: string; dnsNames?: string[]; ipAddresses?: string[]; client?: boolean }): { cert: string; key: string };
}

/** A throwaway CA made with the openssl command line (Debian's openssl is on every machine here). */
export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'ql-pki-'));
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=quota-ledger test CA', '-keyout', 'ca.key', '-out', 'ca.crt');
  let serial = 1;
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    issue(name, { commonName, dnsNames = [], ipAddresses = [], client = false }) {
      const alt = [...dnsNames.map((d) => `DNS:${d}`), ...ipAddresses.map((ip) => `IP:${ip}`)];
      writeFileSync(
        join(dir, `${name}.ext`),
        [`extendedKeyUsage=${client ? 'clientAuth' : 'serverAuth'}`, ...(alt.length ? [`subjectAltName=${alt.join(',')}`] : [])].join('\n'),
      );
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${commonName}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
      openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', String(serial++), '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.crt`);
      return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
    },
  };
}
