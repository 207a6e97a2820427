import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEPLOY } from '../support/deploy.js';
import { kustomizeBuild, kustomizeObjects } from '../support/kustomize.js';

// deploy/kubernetes/overlays/no-cert-manager needs a ca.crt beside it, which kustomize cannot
// ask for in words: make-ca.sh makes one (and the serving certificate), and every place a user
// reads first (the kustomization, the README beside it, the install page) names the message
// kustomize gives without it. Rendered from a copy, so the working tree is never touched.

const WORK = mkdtempSync(join(tmpdir(), 'ql-no-cert-manager-'));
afterAll(() => rmSync(WORK, { recursive: true, force: true }));
const copy = (name: string): string => {
  const root = join(WORK, name);
  cpSync(join(DEPLOY, 'kubernetes'), root, { recursive: true });
  rmSync(join(root, 'overlays/no-cert-manager/ca.crt'), { force: true });
  rmSync(join(root, 'overlays/no-cert-manager/pki'), { recursive: true, force: true });
  return join(root, 'overlays/no-cert-manager');
};
const KUSTOMIZE_MESSAGE = /evalsymlink failure on '[^']*no-cert-manager\/ca\.crt'/;

describe('overlays/no-cert-manager without and with its ca.crt', () => {
  it('fails without ca.crt with the message that the kustomization, its README and the install page explain', () => {
    const result = kustomizeBuild(copy('missing'));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(KUSTOMIZE_MESSAGE);
    for (const page of [
      'kubernetes/overlays/no-cert-manager/kustomization.yaml',
      'kubernetes/overlays/no-cert-manager/README.md',
      '../docs/install/kubernetes.md',
    ]) {
      const text = readFileSync(join(DEPLOY, page), 'utf8');
      expect(text, page).toContain('evalsymlink failure on');
      expect(text, page).toContain('make-ca.sh');
    }
  });

  it('make-ca.sh writes ca.crt, the CA of a serving certificate for the Service, and the overlay then renders it into every webhook', () => {
    const overlay = copy('made');
    const out = execFileSync(join(overlay, 'make-ca.sh'), { encoding: 'utf8' });
    expect(out).toContain('kubectl -n quota-ledger create secret generic quota-ledger-tls --type=kubernetes.io/tls');
    const pki = join(overlay, 'pki');
    expect(execFileSync('openssl', ['verify', '-CAfile', join(overlay, 'ca.crt'), join(pki, 'tls.crt')], { encoding: 'utf8' })).toContain(
      ': OK',
    );
    const san = execFileSync('openssl', ['x509', '-in', join(pki, 'tls.crt'), '-noout', '-ext', 'subjectAltName'], { encoding: 'utf8' });
    expect(san).toContain('DNS:quota-ledger.quota-ledger.svc');
    const ca = readFileSync(join(overlay, 'ca.crt'), 'utf8');
    expect(ca).not.toContain('PRIVATE KEY');
    const webhooks = kustomizeObjects(overlay)
      .filter((d) => /WebhookConfiguration$/.test(String((d as { kind?: string }).kind)))
      .flatMap((d) => (d as { webhooks: { clientConfig: { caBundle: string } }[] }).webhooks);
    expect(webhooks.length).toBe(6);
    for (const webhook of webhooks)
      expect(Buffer.from(webhook.clientConfig.caBundle.replace(/\s+/g, ''), 'base64').toString('utf8')).toBe(ca);
  });

  it('make-ca.sh never replaces a ca.crt that is there', () => {
    const overlay = copy('twice');
    execFileSync(join(overlay, 'make-ca.sh'), { encoding: 'utf8' });
    const before = readFileSync(join(overlay, 'ca.crt'), 'utf8');
    const again = spawnSync(join(overlay, 'make-ca.sh'), { encoding: 'utf8' });
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('ca.crt is there already');
    expect(readFileSync(join(overlay, 'ca.crt'), 'utf8')).toBe(before);
    expect(existsSync(join(overlay, 'pki/ca.key'))).toBe(true);
  });
});
