// The executions list under load: a real `runner server` holding 10,000 executions (submitted over
// REST first), then `GET /api/v1/executions` (the first page) and `?status=succeeded` from 100
// connections at once for 10 s each (autocannon in a process of its own, so the load generator does
// not share the master's event loop). Target: p99 under 10 ms for both. `GET /api/v1/dashboard`
// (which counts the same runs) is measured too, without a target. Each line also gives the
// master's CPU time per request, which the machine's load disturbs far less than latency does.
//
//   node build.mjs && node test/bench/executions-list.mjs [--runs 10000] [--connections 100] [--seconds 10]
//     [--data-dir DIR] [--floor]
//
// With --data-dir the store is kept there and a later run seeds only what is missing, so repeated
// measurements skip the ~45 s of seeding (the master restarts each time: nothing is warm).
// --floor also loads a bare node:http server answering a fixed body of the first page's size: on a
// busy machine even that misses the target, which says the target cannot be judged there.
//
// With --store postgres://... the master keeps its store on that PostgreSQL database (a database of
// the bench's own: it is emptied first) and the executions are seeded in SQL (a master migrates the
// empty database, stops, the rows go in with generate_series, a master starts on them): the issue's
// 1,000,000 take seconds instead of hours. Target there: p99 under 20 ms with --runs 1000000; the
// master's RSS is printed after start and after the load (flat: it holds no history in memory).
//
// Prints readable lines, then one JSON line.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { autocannon, cpuMs, emptyDatabase, round, rssMb, startMaster } from './support/master.mjs';

/**
 * The same load against a bare node:http server answering a fixed body of the first page's size:
 * what this machine allows right now, to judge the master's figures against (--floor).
 */
async function floor(bytes) {
  const server = spawn(
    process.execPath,
    [
      '-e',
      `const body = Buffer.alloc(${bytes}, 'x');
       require('node:http').createServer((req, res) => {
         res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
         res.end(body);
       }).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const [port] = await once(server.stdout, 'data');
    const cpuBefore = cpuMs(server.pid);
    const out = await autocannon({
      url: `http://127.0.0.1:${Number(port)}/`,
      connections,
      duration: seconds,
      headers: {},
    });
    const figures = {
      bytes,
      requests_per_s: round(out.requests.average, 0),
      p50_ms: out.latency.p50,
      p99_ms: out.latency.p99,
      cpu_us_per_request: round(((cpuMs(server.pid) - cpuBefore) * 1000) / out.requests.total, 1),
      load_average_1m: round(loadavg()[0], 1),
    };
    console.log(
      `floor: bare node:http, fixed ${bytes} B body, at ${connections} connections: ${figures.requests_per_s} req/s, p50 ${figures.p50_ms} ms, p99 ${figures.p99_ms} ms; CPU ${figures.cpu_us_per_request} µs/request; load ${figures.load_average_1m}`,
    );
    return figures;
  } finally {
    server.kill();
  }
}

const { values } = parseArgs({
  options: {
    store: { type: 'string' },
    runs: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
    'data-dir': { type: 'string' },
    floor: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const connections = Number(values.connections);
const seconds = Number(values.seconds);
const onPostgres = values.store !== undefined;
const TARGET_P99_MS = onPostgres ? 20 : 10;

/** A data directory whose config keeps every execution: retention (10,000 runs, 30 days) would prune the seed. */
function keepEverythingDir() {
  const dir = mkdtempSync(join(tmpdir(), 'runner-bench-'));
  writeFileSync(
    join(dir, 'config.yaml'),
    'engine:\n  retention:\n    max_runs: 0\n    max_age: "0"\n    log_max_runs: 0\n    log_max_age: "0"\n',
  );
  return dir;
}

/** `runs` executions (one task each) written straight into PostgreSQL; every tenth failed. */
async function seedPostgres(url, count) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const started = Date.now();
    // A second apart, the newest a second ago (UTC, as the engine writes them).
    const at = `to_char((now() AT TIME ZONE 'UTC') - ($1 - i) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    await client.query(
      `INSERT INTO runs (id, workflow_name, status, dry_run, started_at, completed_at, duration, trigger, counts)
       SELECT 'seed-' || lpad(i::text, 8, '0'), (ARRAY['build','deploy','backup','report'])[1 + i % 4],
              CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'succeeded' END, 0, ${at}, ${at}, 5, 'api', '{"succeeded":1}'
         FROM generate_series(0, $1 - 1) AS i`,
      [count],
    );
    await client.query(
      `INSERT INTO run_tasks (run_id, seq, name, task, agent, status, attempts, started_at, completed_at, duration, message, log)
       SELECT 'seed-' || lpad(i::text, 8, '0'), 0, 'only', 'only', 'local',
              CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'succeeded' END, 1, ${at}, ${at}, 5, 'run ' || i, '[]'
         FROM generate_series(0, $1 - 1) AS i`,
      [count],
    );
    await client.query('ANALYZE');
    return (Date.now() - started) / 1000;
  } finally {
    await client.end();
  }
}

const WORKFLOWS = ['build', 'deploy', 'backup', 'report'];
const content = (i) => `version: "1.0"
tasks:
  - name: only
    exec:
      script: return ${i % 10 !== 0}, "run ${i}"
`;

const result = { store: onPostgres ? 'postgres' : 'embedded', executions: runs, connections, seconds };
if (onPostgres) {
  await emptyDatabase(values.store);
  const migrating = await startMaster({ args: ['--store', values.store] });
  await migrating.stop();
  result.seed_seconds = round(await seedPostgres(values.store, runs), 1);
  console.log(`seeded ${runs} executions in PostgreSQL with SQL in ${result.seed_seconds} s`);
}
const master = await startMaster({
  ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
  ...(onPostgres ? { args: ['--store', values.store], dataDir: keepEverythingDir() } : {}),
});
let failure;
result.master_rss_mb_at_start = rssMb(master.child.pid);
try {
  // Seeding: 32 submissions in flight at a time; every tenth run fails so the status filter has work.
  const seedStarted = Date.now();
  const before = await master.request('GET', '/api/v1/executions?limit=1');
  if (before.status !== 200) throw new Error(`GET /api/v1/executions: ${before.status} ${JSON.stringify(before.body)}`);
  let next = before.body.total;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < runs) {
        const i = next++;
        const r = await master.request('POST', '/api/v1/workflows/run', {
          content: content(i),
          workflow_name: WORKFLOWS[i % WORKFLOWS.length],
        });
        if (r.status !== 202) throw new Error(`seeding run ${i}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    }),
  );
  for (;;) {
    const r = await master.request('GET', '/api/v1/executions?status=running&limit=1');
    if (r.body.total === 0) break;
    await sleep(100);
  }
  if (!onPostgres) {
    result.seed_seconds = round((Date.now() - seedStarted) / 1000, 1);
    console.log(`seeded ${runs - before.body.total} executions (${runs} wanted) in ${result.seed_seconds} s`);
  }

  // Warm-up, not measured: the JIT, and the store's first retention pass (a second after start)
  // would otherwise land in whichever path is measured first.
  await autocannon({ url: `${master.base}/api/v1/executions`, connections, duration: 2, headers: master.headers() });
  for (const [name, path] of [
    ['first_page', '/api/v1/executions'],
    ['status_succeeded', '/api/v1/executions?status=succeeded'],
    // Not under the target, measured because it counts the same runs (five lists per call).
    ['dashboard', '/api/v1/dashboard'],
  ]) {
    const check = await master.request('GET', path);
    if (check.status !== 200) throw new Error(`GET ${path}: ${check.status} ${JSON.stringify(check.body)}`);
    const cpuBefore = cpuMs(master.child.pid);
    const out = await autocannon({
      url: `${master.base}${path}`,
      connections,
      duration: seconds,
      headers: master.headers(),
    });
    result[name] = {
      ...(check.body.total === undefined ? {} : { total: check.body.total }),
      requests_per_s: round(out.requests.average, 0),
      p50_ms: out.latency.p50,
      p99_ms: out.latency.p99,
      errors: out.errors + out.non2xx,
      // What a request costs the master whatever the machine's load: its CPU time over the requests.
      master_cpu_us_per_request: round(((cpuMs(master.child.pid) - cpuBefore) * 1000) / out.requests.total, 1),
      load_average_1m: round(loadavg()[0], 1),
    };
    console.log(
      `GET ${path}${check.body.total === undefined ? '' : ` (${check.body.total} matching)`} at ${connections} connections: ${result[name].requests_per_s} req/s, p50 ${out.latency.p50} ms, p99 ${out.latency.p99} ms, ${result[name].errors} errors; master CPU ${result[name].master_cpu_us_per_request} µs/request; load ${result[name].load_average_1m}`,
    );
  }
  result.master_rss_mb_after = rssMb(master.child.pid);
  console.log(
    `master RSS: ${result.master_rss_mb_at_start} MiB at start, ${result.master_rss_mb_after} MiB after the load`,
  );
  result.meets_target = result.first_page.p99_ms < TARGET_P99_MS && result.status_succeeded.p99_ms < TARGET_P99_MS;
  console.log(`target p99 < ${TARGET_P99_MS} ms: ${result.meets_target ? 'met' : 'MISSED'}`);
  if (values.floor)
    result.floor = await floor(
      Buffer.byteLength(JSON.stringify((await master.request('GET', '/api/v1/executions')).body)),
    );
} catch (error) {
  failure = error;
} finally {
  await master.stop();
}
console.log(JSON.stringify({ bench: 'executions-list', ...result, ...(failure ? { error: String(failure) } : {}) }));
if (failure) {
  console.error(failure);
  process.exitCode = 1;
}
