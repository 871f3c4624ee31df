// What authentication costs a request, and whether password guessing slows anyone else down.
//
// 1. GET /api/v1/agents against a master with `--auth off`, then against one with authentication
//    on, once per way of authenticating (the local credential, an API token, a session token (JWT),
//    HTTP Basic): at 100 connections with autocannon (which counts whole milliseconds), and on one
//    connection, request after request (to the microsecond). Target: under 0.2 ms added to the p50.
// 2. 1,000 failed logins from one address (50 at a time) while another user polls GET /api/v1/health
//    one request after the other. Target: that user's p99 stays under 10 ms.
//
//   node build.mjs && node test/bench/auth-overhead.mjs [--seconds 5]
//
// Prints readable lines, then one JSON line.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { percentile, round, startMaster } from './support/master.mjs';

const TARGET_ADDED_P50_MS = 0.2;
const TARGET_HEALTH_P99_MS = 10;
const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' } } });
const seconds = Number(values.seconds);

/** One connection, one request after the other: the p50 in ms, to the microsecond. */
async function sequential(base, headers, count = 2000) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await new Promise((resolve, reject) => {
      http
        .get(`${base}/api/v1/agents`, { agent, headers }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        })
        .on('error', reject);
    });
    times.push(performance.now() - started);
  }
  agent.destroy();
  return round(percentile(times, 50), 3);
}

/** GET /api/v1/agents with these headers, at 100 connections and on one. */
async function load(base, headers) {
  const run = (duration) =>
    autocannon({ url: `${base}/api/v1/agents`, connections: 100, duration, headers, pipelining: 1 });
  await run(2); // warm-up: JIT, caches, the Basic check's one scrypt, a master just started
  const result = await run(seconds);
  if (result.non2xx > 0) throw new Error(`${result.non2xx} answers were not 2xx (headers ${Object.keys(headers)})`);
  return {
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    requests_per_s: Math.round(result.requests.average),
    one_connection_p50_ms: await sequential(base, headers),
  };
}

const result = { seconds, connections: 100 };
let failure;
// Both masters run at once and each method is measured right after the open master, so that a
// host whose load drifts (other work on it) skews both sides of a comparison alike.
const open = await startMaster({ args: ['--auth', 'off'] });
const master = await startMaster();
try {
  const { body: created } = await master.request('POST', '/api/v1/auth/tokens', { name: 'bench', role: 'viewer' });
  const password = 'bench-password-1';
  await master.request('POST', '/api/v1/users', { name: 'bench', role: 'viewer', password });
  const login = await fetch(`${master.base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bench', password }),
  });
  const { token: jwt } = await login.json();
  const methods = {
    local: master.headers(),
    api_token: { authorization: `Bearer ${created.token}` },
    jwt: { authorization: `Bearer ${jwt}` },
    basic: { authorization: `Basic ${Buffer.from(`bench:${password}`).toString('base64')}` },
  };
  result.on = {};
  for (const [name, headers] of Object.entries(methods)) {
    const off = await load(open.base, {});
    const on = await load(master.base, headers);
    result.on[name] = {
      ...on,
      off,
      added_p50_ms: round(on.p50_ms - off.p50_ms, 3),
      added_one_connection_p50_ms: round(on.one_connection_p50_ms - off.one_connection_p50_ms, 3),
    };
  }
  await open.stop();

  // Password guessing from one address while someone else checks health, one request at a time.
  const healthMs = [];
  let guessing = true;
  const poller = (async () => {
    while (guessing) {
      const started = performance.now();
      await fetch(`${master.base}/api/v1/health`).then((r) => r.arrayBuffer());
      healthMs.push(performance.now() - started);
    }
  })();
  const statuses = {};
  const guessStarted = performance.now();
  for (let batch = 0; batch < 20; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        fetch(`${master.base}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: i % 2 ? 'admin' : `nobody-${batch}-${i}`, password: `guess-${batch}-${i}` }),
        }).then(async (r) => (await r.arrayBuffer(), r.status)),
      ),
    );
    for (const status of answers) statuses[status] = (statuses[status] ?? 0) + 1;
  }
  const guessSeconds = (performance.now() - guessStarted) / 1000;
  guessing = false;
  await poller;
  result.failed_logins = {
    attempts: 1000,
    seconds: round(guessSeconds, 2),
    statuses,
    health_requests: healthMs.length,
    health_p50_ms: round(percentile(healthMs, 50), 2),
    health_p99_ms: round(percentile(healthMs, 99), 2),
  };
} catch (error) {
  failure = error;
} finally {
  await open.stop();
  await master.stop();
}
if (failure) throw failure;

for (const [name, m] of Object.entries(result.on)) {
  console.log(
    `${name}: 100 connections p50 ${m.p50_ms} ms against ${m.off.p50_ms} ms with auth off (+${m.added_p50_ms}), p99 ${m.p99_ms} ms, ${m.requests_per_s} req/s (off ${m.off.requests_per_s}); one connection p50 ${m.one_connection_p50_ms} ms against ${m.off.one_connection_p50_ms} ms (+${m.added_one_connection_p50_ms})`,
  );
}
const f = result.failed_logins;
console.log(
  `1,000 failed logins in ${f.seconds} s (${JSON.stringify(f.statuses)}): another user's GET /health p50 ${f.health_p50_ms} ms, p99 ${f.health_p99_ms} ms over ${f.health_requests} requests`,
);
const worst = (key) => Math.max(...Object.values(result.on).map((m) => m[key]));
result.targets = {
  added_p50_ms_100_connections: { target: TARGET_ADDED_P50_MS, worst: worst('added_p50_ms') },
  added_p50_ms_one_connection: { target: TARGET_ADDED_P50_MS, worst: worst('added_one_connection_p50_ms') },
  health_p99_ms: { target: TARGET_HEALTH_P99_MS, measured: f.health_p99_ms },
};
for (const target of Object.values(result.targets)) {
  target.met = (target.worst ?? target.measured) < target.target;
}
console.log(JSON.stringify(result));
