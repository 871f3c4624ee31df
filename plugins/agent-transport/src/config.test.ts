import { staticConfig } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { readMasterConfig } from './config.js';
import { plugin } from './plugin.js';

describe('master transport config', () => {
  it('defaults to port 50053 on loopback, heartbeats every 30 s, offline after 90 s, warning above 80%', () => {
    expect(readMasterConfig(staticConfig({}, '/tmp', [plugin]))).toMatchObject({
      port: 50053,
      bindAddress: '127.0.0.1',
      tlsCert: undefined,
      heartbeatIntervalMs: 30_000,
      heartbeatTimeoutMs: 90_000,
      warningThreshold: 80,
    });
  });

  it('binds where --bind-address (http.bind_address) says unless grpc.bind_address is set', () => {
    const http = {
      id: 'http',
      config: { 'http.bind_address': { schema: { type: 'string' as const }, default: '127.0.0.1', help: 'h' } },
    };
    const read = (values: Record<string, unknown>) => readMasterConfig(staticConfig(values, '/tmp', [plugin, http]));
    expect(read({ http: { bind_address: '0.0.0.0' } }).bindAddress).toBe('0.0.0.0');
    expect(read({ http: { bind_address: '0.0.0.0' }, grpc: { bind_address: '10.0.0.5' } }).bindAddress).toBe(
      '10.0.0.5',
    );
  });

  it('reads seconds as durations', () => {
    const config = readMasterConfig(
      staticConfig({ agent: { heartbeat_interval: 0.2, heartbeat_timeout: 0.6 }, grpc: { port: 0 } }, '/tmp', [plugin]),
    );
    expect(config).toMatchObject({ heartbeatIntervalMs: 200, heartbeatTimeoutMs: 600, port: 0 });
  });

  it('serves TLS with --tls-cert/--tls-key (http.tls_*) unless grpc.tls_* give gRPC its own pair', () => {
    const read = (values: Record<string, unknown>) => readMasterConfig(staticConfig(values, '/tmp', [plugin]));
    expect(read({ http: { tls_cert: '/h.pem', tls_key: '/h.key' } })).toMatchObject({
      tlsCert: '/h.pem',
      tlsKey: '/h.key',
    });
    const own = { http: { tls_cert: '/h.pem', tls_key: '/h.key' }, grpc: { tls_cert: '/g.pem', tls_key: '/g.key' } };
    expect(read(own)).toMatchObject({ tlsCert: '/g.pem', tlsKey: '/g.key' });
    expect(read({})).toMatchObject({ tlsCert: undefined, tlsKey: undefined });
  });

  it('names the key of a bad value', () => {
    const read = (values: Record<string, unknown>) => () => readMasterConfig(staticConfig(values, '/tmp', [plugin]));
    expect(read({ grpc: { port: 70000 } })).toThrow(
      /config grpc.port \(from test\): expected an integer from 0 to 65535, got 70000/,
    );
    expect(read({ grpc: { tls_cert: '/c.pem' } })).toThrow(/grpc.tls_key \(--tls-key\) is not set/);
    expect(read({ http: { tls_key: '/k.pem' } })).toThrow(/http.tls_cert \(--tls-cert\) is not set/);
    expect(read({ agent: { heartbeat_interval: 10, heartbeat_timeout: 5 } })).toThrow(
      /heartbeat_timeout .* must be longer than agent.heartbeat_interval/,
    );
    expect(read({ agent: { warning_threshold: 0 } })).toThrow(/warning_threshold/);
  });
});
