// Shared by the benchmarks that drive a real `runner server`: free ports, starting and stopping the
// master, authenticated requests (the master's local credential when authentication is on), and
// percentiles. Benchmarks print readable lines, then one JSON line.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

export const root = resolve(import.meta.dirname, '../../..');
export const bin = join(root, 'kernel/bin/runner.js');

export function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** The value at percentile `p` (0-100) of `values`, nearest rank. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const round = (x, digits = 2) => +x.toFixed(digits);

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux
/** CPU time (user + system) a process has used so far, in ms (10 ms resolution; Linux). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime
}

/**
 * Starts `runner server` on free loopback ports with a fresh data directory (or `dataDir`) and waits
 * for /api/v1/health. `request` sends the master's local credential once the auth plugin wrote one.
 */
export async function startMaster({
  dataDir = mkdtempSync(join(tmpdir(), 'runner-bench-')),
  args = [],
  env = {},
} = {}) {
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const base = `http://127.0.0.1:${httpPort}`;
  // BENCH_MASTER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the master (Node refuses
  // --cpu-prof in NODE_OPTIONS, and that would profile the load generator too).
  const nodeArgs = (process.env.BENCH_MASTER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      bin,
      'server',
      '--http-port',
      String(httpPort),
      '--bind-address',
      '127.0.0.1',
      '--port',
      String(grpcPort),
      ...args,
    ],
    { env: { ...process.env, RUNNER_DATA_DIR: dataDir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  let exit;
  const exited = new Promise((r) => child.on('exit', (code, signal) => r((exit = { code, signal }))));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const tokenFile = join(dataDir, 'auth', 'local.token');
  let token;
  const headers = () => {
    if (token === undefined && existsSync(tokenFile)) token = readFileSync(tokenFile, 'utf8').trim();
    return token ? { authorization: `Bearer ${token}` } : {};
  };

  /** One request; resolves with status, parsed body and latency in ms. */
  const request = (method, path, body) =>
    new Promise((resolveRequest, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const started = performance.now();
      const req = http.request(
        `${base}${path}`,
        {
          method,
          agent,
          headers: {
            ...headers(),
            ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => {
            let json = text;
            try {
              json = JSON.parse(text);
            } catch {}
            resolveRequest({ status: res.statusCode, body: json, ms: performance.now() - started });
          });
        },
      );
      req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
      req.on('error', reject);
      req.end(payload);
    });

  const started = performance.now();
  for (;;) {
    if (exit) throw new Error(`runner server exited (${JSON.stringify(exit)}): ${output.trim()}`);
    if (performance.now() - started > 30_000) throw new Error(`runner server not healthy in 30 s: ${output.trim()}`);
    const ok = await request('GET', '/api/v1/health').then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    await sleep(50);
  }
  // Read the credential again: one read during the health checks may be an earlier master's on
  // this data directory; a healthy master has written its own.
  token = undefined;

  const stop = async () => {
    if (exit) return exit;
    child.kill('SIGTERM');
    const result = await Promise.race([exited, sleep(20_000).then(() => undefined)]);
    if (result) return result;
    child.kill('SIGKILL');
    return { ...(await exited), forced: true };
  };
  /** The master process's CPU time so far (user + system, ms): a cost per run that holds when the machine is busy. */
  const cpuMs = () => {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  };
  return { base, dataDir, httpPort, grpcPort, child, request, headers, stop, cpuMs, output: () => output };
}

/**
 * `count` simulated agents (agent-sim.mjs: real agent clients, the real protocol, in one process)
 * joined to a master from startMaster with its join token. `ready` resolves once every one has
 * registered; kill `child` to end them.
 */
export function startSimAgents(master, count) {
  const token = readFileSync(join(master.dataDir, 'agent-token'), 'utf8').trim();
  const child = spawn(
    process.execPath,
    [
      join(root, 'test/bench/agent-sim.mjs'),
      '--master',
      `127.0.0.1:${master.grpcPort}`,
      '--token',
      token,
      '--count',
      String(count),
      '--report',
      '3600',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const ready = new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (/"ready"/.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`agent-sim exited ${code}: ${out}`)));
  });
  return { child, ready };
}

/**
 * Drops every table of the PostgreSQL database at `url` (created when missing), so a bench's
 * master starts on an empty store. Only for a database of the bench's own.
 */
export async function emptyDatabase(url) {
  const { default: pg } = await import('pg');
  const target = new URL(url);
  const name = target.pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
  } finally {
    await client.end();
  }
}

/** The process's resident set size in MiB (Linux). */
export function rssMb(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : undefined;
}

/** autocannon's CLI with JSON output: the load comes from another process. */
export async function autocannon({ url, connections, duration, headers }) {
  const args = [
    join(root, 'node_modules/autocannon/autocannon.js'),
    '--json',
    '-c',
    String(connections),
    '-d',
    String(duration),
  ];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
  const { stdout } = await promisify(execFile)(process.execPath, [...args, url], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout);
}

/**
 * wrk (Debian's `wrk`, C) against `url`: a load generator that costs the measured machine far less
 * than autocannon, whose own parsing took the second core at 10,000 requests a second (the
 * master sat idle a third of the time). Answers autocannon's shape for what the benches read:
 * requests.average, latency.p50/p99 (ms), non2xx, errors, timeouts; undefined without wrk.
 */
export async function wrk({ url, connections, duration, headers }) {
  const args = ['-t', '1', '-c', String(connections), '-d', `${duration}s`, '--latency'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  let stdout;
  try {
    ({ stdout } = await promisify(execFile)('wrk', [...args, url], { maxBuffer: 16 * 1024 * 1024 }));
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
  const ms = (text) => {
    const [, value, unit] = /^([\d.]+)(us|ms|s)$/.exec(text) ?? [];
    return Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);
  };
  const percentile = (p) => ms(new RegExp(`^\\s*${p}%\\s+(\\S+)`, 'm').exec(stdout)?.[1] ?? 'NaN');
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  return {
    requests: { average: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]) },
    latency: { p50: percentile(50), p99: percentile(99) },
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0),
    errors: errors ? Number(errors[1]) + Number(errors[2]) + Number(errors[3]) : 0,
    timeouts: errors ? Number(errors[4]) : 0,
  };
}
