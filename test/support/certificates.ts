import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface IssueOptions {
  commonName: string;
  /** The subject's O: Kubernetes reads it as the user's group (`system:masters` is cluster-admin). */
  organization?: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  client?: boolean;
}

export interface TestPki {
  readonly dir: string;
  readonly caCert: string;
  /** Issues a certificate signed by the test CA; returns the cert and key file paths. */
  issue(name: string, options: IssueOptions): { cert: string; key: string };
  /** A bare RSA key pair (PEM), e.g. to sign and verify ServiceAccount tokens. */
  keyPair(name: string): { publicKey: string; privateKey: string };
}

/**
 * A throwaway CA made with the openssl command line (Debian's openssl is on every machine here),
 * in `dir` when given (it must be private to the caller), else in a fresh temporary directory.
 */
export function createTestPki(dir = mkdtempSync(join(tmpdir(), 'ql-pki-'))): TestPki {
  mkdirSync(dir, { recursive: true });
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=quota-ledger test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  let serial = 1;
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    issue(name, { commonName, organization, dnsNames = [], ipAddresses = [], client = false }) {
      const alt = [...dnsNames.map((d) => `DNS:${d}`), ...ipAddresses.map((ip) => `IP:${ip}`)];
      writeFileSync(
        join(dir, `${name}.ext`),
        [`extendedKeyUsage=${client ? 'clientAuth' : 'serverAuth'}`, ...(alt.length ? [`subjectAltName=${alt.join(',')}`] : [])].join('\n'),
      );
      const subject = `${organization ? `/O=${organization}` : ''}/CN=${commonName}`;
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`);
      openssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-set_serial',
        String(serial++),
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.crt`,
      );
      return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
    },
    keyPair(name) {
      openssl('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', `${name}.key`);
      openssl('pkey', '-in', `${name}.key`, '-pubout', '-out', `${name}.pub`);
      return { publicKey: join(dir, `${name}.pub`), privateKey: join(dir, `${name}.key`) };
    },
  };
}
