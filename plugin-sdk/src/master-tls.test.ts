import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../testing.js';
import { createMasterClient } from './master-client.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => new Promise((resolve) => (s.closeAllConnections(), s.close(resolve)))),
  );
});

const certificate = (dir: string, name: string) => selfSignedCertificate(dir, name, [name]);

async function serveTls(pair: { cert: string; key: string }): Promise<string> {
  const server = createServer({ cert: readFileSync(pair.cert), key: readFileSync(pair.key) }, (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"status":"ok"}');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('an https:// master', () => {
  it('is trusted through a pinned certificate whatever the host name, and verified by name otherwise', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-master-tls-'));
    const pair = certificate(dir, 'master.example.com');
    const base = await serveTls(pair);
    const options = { dataDir: dir, env: {} };
    // The local CLI: master.json names the certificate, which is pinned.
    const local = createMasterClient(
      { base, source: 'master.json', local: false, trust: { file: pair.cert, source: 'master.json', pin: true } },
      options,
    );
    expect(await local.call('GET', '/health')).toEqual({ status: 'ok' });
    // --ca: the chain is trusted, but 127.0.0.1 is not a name the certificate holds.
    const byCa = createMasterClient(
      { base, source: '--master-url', local: false, trust: { file: pair.cert, source: '--ca' } },
      options,
    );
    const mismatch = await byCa.call('GET', '/health').catch((e: Error) => e);
    expect((mismatch as Error).message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID: its certificate is not trusted by /);
    // A pinned certificate that is not the one served is refused.
    const other = certificate(dir, 'other.example.com');
    const wrongPin = createMasterClient(
      { base, source: 'master.json', local: false, trust: { file: other.cert, source: 'master.json', pin: true } },
      options,
    );
    expect(((await wrongPin.call('GET', '/health').catch((e: Error) => e)) as Error).message).toMatch(
      /DEPTH_ZERO_SELF_SIGNED_CERT: its certificate is not trusted by .*other\.example\.com\.pem/,
    );
  });

  it('names a trusted file that is missing or not a certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-master-tls-'));
    const pair = certificate(dir, 'localhost');
    const base = await serveTls(pair);
    const client = (file: string) =>
      createMasterClient(
        { base, source: 't', local: false, trust: { file, source: '--ca' } },
        { dataDir: dir, env: {} },
      );
    await expect(client(join(dir, 'nope.pem')).call('GET', '/health')).rejects.toThrow(
      `master TLS certificate ${join(dir, 'nope.pem')} (from --ca): no such file`,
    );
    await expect(client(pair.key).call('GET', '/health')).rejects.toThrow(/not a PEM certificate .*never its key/);
  });
});
