import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSignedCertificate, staticConfig } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { HTTP_CONFIG, readHttpConfig } from './config.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'runner-http-tls-'));

const selfSignedCert = (dir: string) => selfSignedCertificate(dir, 'cert');

const read = (values: Record<string, unknown>) =>
  readHttpConfig(staticConfig(values, '/tmp', [{ id: 'http', config: HTTP_CONFIG }]));

describe('http.tls_cert and http.tls_key', () => {
  it('reads both files, and keeps the certificate path for master.json', () => {
    const dir = tempDir();
    const { cert, key } = selfSignedCert(dir);
    const tls = read({ http: { tls_cert: cert, tls_key: key } }).tls;
    expect(tls?.certFile).toBe(cert);
    expect(tls?.cert.toString()).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(tls?.key.toString()).toMatch(/PRIVATE KEY-----/);
    expect(read({}).tls).toBeUndefined();
  });

  it('refuses half a pair, a missing file, and a file that is not what its key says', () => {
    const dir = tempDir();
    const { cert, key } = selfSignedCert(dir);
    expect(() => read({ http: { tls_cert: cert } })).toThrow(
      'HTTPS needs both a certificate and its key: http.tls_key (--tls-key) is not set',
    );
    expect(() => read({ http: { tls_cert: join(dir, 'nope.pem'), tls_key: key } })).toThrow(
      `http.tls_cert ${join(dir, 'nope.pem')} (from test): no such file`,
    );
    // The key given as the certificate: named, never quoted.
    expect(() => read({ http: { tls_cert: key, tls_key: key } })).toThrow(
      `http.tls_cert ${key} (from test): not a PEM certificate`,
    );
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'hello');
    expect(() => read({ http: { tls_cert: cert, tls_key: junk } })).toThrow(
      `http.tls_key ${junk} (from test): not a PEM private key`,
    );
  });
});
