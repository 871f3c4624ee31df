import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { createCryptoModule, createJsonModule, createYamlModule } from './data.js';

const { call } = luaCallContext();

describe('json and yaml', () => {
  it('round-trips values and names what cannot be decoded', async () => {
    const json = createJsonModule();
    expect(json.encode(call, { app: 'web', hosts: ['a', 'b'] })).toBe('{"app":"web","hosts":["a","b"]}');
    expect(json.encode(call, { a: 1 }, { indent: 2 })).toBe('{\n  "a": 1\n}');
    expect(json.decode(call, '{"n": 3, "l": [1, null]}')).toEqual({ n: 3, l: [1, null] });
    expect(() => json.decode(call, '{"n": ')).toThrow(/^json\.decode: /);
    expect(() => json.encode(call, { f: { kind: 'lua-function', call: async () => [] } })).toThrow(
      'json.encode: value.f is a function that cannot be encoded',
    );
    const yaml = await createYamlModule();
    expect(yaml.encode(call, { port: 8080, hosts: ['a'] })).toBe('port: 8080\nhosts:\n  - a\n');
    expect(yaml.decode(call, 'a: 1\n---\nb: 2\n')).toEqual({ a: 1 });
    expect(yaml.decode(call, 'a: 1\n---\nb: 2\n', { all: true })).toEqual([{ a: 1 }, { b: 2 }]);
    expect(() => yaml.decode(call, 'a: [1,')).toThrow(/^yaml\.decode: /);
  });
});

describe('crypto', () => {
  const crypto = createCryptoModule();

  it('hashes, signs, encodes and draws random values', () => {
    expect(crypto.hash(call, 'sha256', 'abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(crypto.hash(call, 'md5', '')).toBe('d41d8cd98f00b204e9800998ecf8427e');
    expect(() => crypto.hash(call, 'nope', 'x')).toThrow(/^crypto\.hash: /);
    expect(crypto.hmac(call, 'sha256', 'key', 'The quick brown fox jumps over the lazy dog')).toBe(
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
    expect(crypto.random(call, 16)).toMatch(/^[0-9a-f]{32}$/);
    expect(crypto.random(call, 16, 'base64url')).toMatch(/^[\w-]{22}$/);
    expect(crypto.uuid(call)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/);
    expect(crypto.base64_decode(call, crypto.base64_encode(call, 'user:pass') as string)).toBe('user:pass');
  });

  it('inspects an X.509 certificate', () => {
    const dir = mkdtempSync(join(tmpdir(), 'x509-'));
    const pem = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '30',
        '-subj',
        '/CN=web.example.test',
        '-addext',
        'subjectAltName=DNS:web.example.test,DNS:www.example.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        pem,
      ],
      { stdio: 'ignore' },
    );
    const info = crypto.x509(call, readFileSync(pem, 'utf8')) as Record<string, unknown>;
    expect(info).toMatchObject({
      subject: 'CN=web.example.test',
      issuer: 'CN=web.example.test',
      san: ['DNS:web.example.test', 'DNS:www.example.test'],
    });
    expect(info.days_left).toBeGreaterThanOrEqual(29);
    expect(info.fingerprint_sha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(() => crypto.x509(call, 'nope')).toThrow('crypto.x509: not a PEM certificate');
  });
});
