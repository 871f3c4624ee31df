import { readFileSync } from 'node:fs';
import type { RunnerConfig } from './config.js';
import { InvalidInputError } from './errors.js';

/**
 * The certificate and key files of one TLS listener (`<section>.tls_cert`, `<section>.tls_key`):
 * both or neither. A half pair is a boot error naming the missing key, so a server never starts in
 * plaintext because one flag was forgotten. `purpose` starts the message (`HTTPS`, `TLS for agents`).
 */
export function configuredTlsPair(
  config: RunnerConfig,
  section: string,
  purpose: string,
): { cert: string; key: string } | undefined {
  const cert = config.get<string | undefined>(`${section}.tls_cert`) || undefined;
  const key = config.get<string | undefined>(`${section}.tls_key`) || undefined;
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    const field = cert === undefined ? `${section}.tls_cert` : `${section}.tls_key`;
    const flag = cert === undefined ? '--tls-cert' : '--tls-key';
    throw new InvalidInputError(`${purpose} needs both a certificate and its key: ${field} (${flag}) is not set`, {
      field,
    });
  }
  return { cert, key };
}

const PEM = {
  certificate: /-----BEGIN CERTIFICATE-----/,
  'private key': /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
} as const;

/**
 * Reads a PEM file a config key names; an error names the key, the file and where the value came
 * from (`http.tls_key /etc/x.key (from --tls-key): no such file`).
 */
export function readPemFile(config: RunnerConfig, field: string, file: string, kind: keyof typeof PEM): Buffer {
  let text: Buffer;
  try {
    text = readFileSync(file);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new InvalidInputError(
      `${field} ${file} (from ${config.sourceOf(field)}): ${missing ? 'no such file' : (error as Error).message}`,
      { field },
    );
  }
  if (!PEM[kind].test(text.toString('latin1'))) {
    throw new InvalidInputError(`${field} ${file} (from ${config.sourceOf(field)}): not a PEM ${kind}`, { field });
  }
  return text;
}
