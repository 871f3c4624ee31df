import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LuaFunctionRef } from '@runner/plugin-sdk';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { createCryptoModule, createIniModule, createJsonModule, createTomlModule, createYamlModule } from './data.js';

const { call } = luaCallContext();
const luaFunction: LuaFunctionRef = { kind: 'lua-function', call: async () => [] };

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

describe('toml', () => {
  it('round-trips tables, sections and arrays of tables', async () => {
    const toml = await createTomlModule();
    const config = { title: 'web', server: { port: 8080, hosts: ['a', 'b'] }, upstream: [{ n: 1 }, { n: 2 }] };
    const text = toml.encode(call, config) as string;
    expect(text).toContain('[server]\nport = 8080');
    expect(text).toContain('[[upstream]]\nn = 1');
    expect(toml.decode(call, text)).toEqual(config);
    expect(toml.decode(call, toml.encode(call, []) as string)).toEqual({});
  });

  it('decodes dates and times to the ISO text they were written as', async () => {
    const toml = await createTomlModule();
    const text = 'at = 1979-05-27T07:32:00-08:00\nday = 1979-05-27\nlist = [07:32:00]\n';
    expect(toml.decode(call, text)).toEqual({
      at: '1979-05-27T07:32:00.000-08:00',
      day: '1979-05-27',
      list: ['07:32:00.000'],
    });
  });

  it('names the position of a syntax error and the path of what cannot be encoded', async () => {
    const toml = await createTomlModule();
    expect(() => toml.decode(call, 'a = 1\nb = "x\n')).toThrow(
      'toml.decode: line 2, column 7: control characters are not allowed in strings',
    );
    expect(() => toml.decode(call, 'n = 99999999999999999999')).toThrow(/^toml\.decode: line 1, column 5: /);
    expect(() => toml.encode(call, { s: { f: luaFunction } })).toThrow(
      'toml.encode: value.s.f is a function that cannot be encoded',
    );
    expect(() => toml.encode(call, ['a'])).toThrow('toml.encode: argument 1 must be a table with string keys');
  });
});

describe('ini', () => {
  it('round-trips top-level keys, sections and lists', async () => {
    const ini = await createIniModule();
    const config = { name: 'web', server: { port: '8080', tls: true, hosts: ['a', 'b'] }, a: { b: { c: 'd' } } };
    const text = ini.encode(call, config, { whitespace: true }) as string;
    expect(text).toBe('name = web\n\n[server]\nport = 8080\ntls = true\nhosts[] = a\nhosts[] = b\n\n[a.b]\nc = d\n');
    expect(ini.decode(call, text)).toEqual(config);
    expect(ini.encode(call, { b: '2', a: '1' }, { sort: true })).toBe('a=1\nb=2\n');
  });

  it('keeps values as strings, reads bare keys as true and skips comments', async () => {
    const ini = await createIniModule();
    const text =
      '; my.cnf\n[mysqld]\nport = 3306\nskip-name-resolve\n# off\nuser = mysql ; comment\nsocket = "/run/a;b"\n';
    expect(ini.decode(call, text)).toEqual({
      mysqld: { port: '3306', 'skip-name-resolve': true, user: 'mysql', socket: '/run/a;b' },
    });
  });

  it('names the line of a malformed header and the path of what cannot be encoded', async () => {
    const ini = await createIniModule();
    expect(() => ini.decode(call, '[a]\nx = 1\n\n[broken\ny = 2\n')).toThrow(
      'ini.decode: line 4: a section header must be "[name]" alone on its line, got "[broken"',
    );
    expect(() => ini.decode(call, 'a = 1\r\n= 2\r\n')).toThrow('ini.decode: line 2: "=" with no key before it');
    expect(() => ini.encode(call, { s: { f: luaFunction } })).toThrow(
      'ini.encode: value.s.f is a function that cannot be encoded',
    );
    expect(() => ini.encode(call, { s: { l: ['a', { x: '1' }] } })).toThrow(
      'ini.encode: value.s.l[2] is a table; INI lists hold only plain values',
    );
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
