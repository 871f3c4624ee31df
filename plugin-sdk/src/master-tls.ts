// How the CLI trusts a master that serves HTTPS. Verification is never turned off: a master whose
// certificate a public CA signed is trusted through the system roots; any other one through a
// certificate file the user names (`--ca`, RUNNER_CA, config master.tls_cert), or, for the master
// of the CLI's own data directory, through the certificate file its master.json records, which is
// then pinned: that exact certificate is accepted whatever host name the CLI dialled (it reaches
// a local master on 127.0.0.1, which a certificate for master.example.com does not name).
import { readFile } from 'node:fs/promises';
import type { PeerCertificate } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { InvalidInputError } from './errors.js';

/** A certificate file the CLI trusts for one master, and where the CLI was told about it. */
export interface MasterTrust {
  /** A PEM file: the master's own certificate or the CA that signed it. */
  file: string;
  /** Words naming where the file came from (`--ca`, `master.tls_cert (from env RUNNER_CA)`...). */
  source: string;
  /** Accept exactly this certificate whatever host name was dialled (the local master's own file). */
  pin?: boolean;
}

/** The TLS options of a connection to a master trusted through `trust`. */
export interface MasterTlsOptions {
  ca: string[];
  checkServerIdentity: (host: string, cert: PeerCertificate) => Error | undefined;
}

/**
 * Reads the trusted file; a missing or non-PEM file is an error naming it and where it was given.
 * The system roots stay trusted beside it, as with NODE_EXTRA_CA_CERTS.
 */
export async function masterTlsOptions(trust: MasterTrust): Promise<MasterTlsOptions> {
  let pem: string;
  try {
    pem = await readFile(trust.file, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new InvalidInputError(
      `master TLS certificate ${trust.file} (from ${trust.source}): ${missing ? 'no such file' : (error as Error).message}`,
      { field: 'master.tls_cert' },
    );
  }
  let fingerprint: string;
  try {
    fingerprint = new X509Certificate(pem).fingerprint256;
  } catch {
    throw new InvalidInputError(
      `master TLS certificate ${trust.file} (from ${trust.source}): not a PEM certificate (give the master's certificate or its CA, never its key)`,
      { field: 'master.tls_cert' },
    );
  }
  // node:tls loads here: imported statically, it cost every command ~5-10 ms (its ESM facade
  // parses the system roots), and only a command that dials an https:// master needs it.
  const { checkServerIdentity, rootCertificates } = await import('node:tls');
  return {
    ca: [...rootCertificates, pem],
    checkServerIdentity: (host, cert) =>
      trust.pin === true && cert.fingerprint256 === fingerprint ? undefined : checkServerIdentity(host, cert),
  };
}

/** The `fetch` options (an undici dispatcher) that trust the master as `trust` says; loaded only for HTTPS. */
export async function masterDispatcher(trust: MasterTrust): Promise<object> {
  const [{ Agent }, connect] = await Promise.all([import('undici'), masterTlsOptions(trust)]);
  return new Agent({ connect });
}

/** What a failed call's TLS error (or a scheme mismatch) means and what to do; undefined for other errors. */
export function tlsFailureReason(
  code: string | undefined,
  message: string | undefined,
  url: string,
  trust: MasterTrust | undefined,
): string | undefined {
  if (url.startsWith('http:') && code === 'UND_ERR_SOCKET') {
    return `the master closed the connection (${message ?? code}); if it serves HTTPS (runner server --tls-cert), use an https:// URL`;
  }
  if (!url.startsWith('https:') || code === undefined) return undefined;
  if (/SSL_WRONG_VERSION_NUMBER|EPROTO/.test(code)) {
    return `${code}: the master does not speak TLS on that port; use an http:// URL`;
  }
  if (/CERT|SIGNATURE|ISSUER|SELF_SIGNED/.test(code)) {
    const trusted = trust ? `${trust.file} (from ${trust.source})` : 'the system roots';
    return `${code}: its certificate is not trusted by ${trusted} (${message ?? code}); give the master's certificate or its CA with --ca <file> or RUNNER_CA`;
  }
  return undefined;
}
