// Saved flows at size, against a real `runner server` (built): 10,000 flows (seeded through
// POST /flows/import, 1,000 a request), then `GET /api/v1/flows` (the first page of 100, with
// statistics) from 100 connections for 10 s (autocannon in a process of its own). Targets: p99
// under 10 ms; saving the 1,000th version of one flow (PUT with base_version, validated by the
// engine) under 5 ms. The saves are sequential, one at a time, as an editor makes them.
//
//   node build.mjs && node test/bench/flows.mjs [--flows 10000] [--versions 1000] [--connections 100]
//     [--seconds 10] [--store postgres://postgres@127.0.0.1:5432/bench_flows]
//
// With --store the master keeps its store on that PostgreSQL database (a database of the bench's
// own: it is emptied first). Prints readable lines, then one JSON line.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { autocannon, emptyDatabase, percentile, round, startMaster, wrk } from './support/master.mjs';

const { values } = parseArgs({
  options: {
    flows: { type: 'string', default: '10000' },
    versions: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
    store: { type: 'string' },
  },
});
const flows = Number(values.flows);
const versions = Number(values.versions);
const connections = Number(values.connections);
const seconds = Number(values.seconds);
const yaml = (i) => `version: "1.0"\ntasks:\n  - name: step-${i}\n    exec:\n      script: return true\n`;

if (values.store) await emptyDatabase(values.store);
const master = await startMaster(values.store ? { args: ['--store', values.store] } : {});
const result = { store: values.store ? 'postgres' : 'embedded', flows, versions, connections, seconds };
const ok = (r, what) => {
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r;
};
try {
  const seedStarted = performance.now();
  for (let at = 0; at < flows; at += 1000) {
    const batch = Array.from({ length: Math.min(1000, flows - at) }, (_, j) => {
      const i = at + j;
      return {
        name: `flow-${String(i).padStart(5, '0')}`,
        description: `bench flow ${i}`,
        tags: [`team-${i % 20}`],
        active: i % 3 !== 0,
        concurrency: null,
        version: 1,
        yaml: yaml(i),
      };
    });
    const document = { format: 'runner-flows', format_version: 1, exported_at: new Date().toISOString(), flows: batch };
    ok(await master.request('POST', '/api/v1/flows/import', document), 'import');
  }
  result.seed_seconds = round((performance.now() - seedStarted) / 1000, 1);

  // Warm-up (the JIT, the first queries), not measured.
  const url = `${master.base}/api/v1/flows`;
  // wrk when Debian's package is there (autocannon's own parsing took the second core and held
  // the master back), autocannon otherwise; the report names which.
  const load = async (duration) =>
    (await wrk({ url, connections, duration, headers: master.headers() })) ??
    (await autocannon({ url, connections, duration, headers: master.headers() }));
  result.client = (await wrk({ url, connections, duration: 2, headers: master.headers() })) ? 'wrk' : 'autocannon';
  if (result.client === 'autocannon') await autocannon({ url, connections, duration: 2, headers: master.headers() });
  const listed = await load(seconds);
  if (listed.non2xx > 0) throw new Error(`list: ${listed.non2xx} answers other than 2xx`);
  result.list = {
    // Requests autocannon gave up on (no answer in its 10 s): a machine too busy to judge the target.
    errors: listed.errors,
    timeouts: listed.timeouts,
    requests_per_s: round(listed.requests.average, 0),
    p50_ms: listed.latency.p50,
    p99_ms: listed.latency.p99,
  };

  // One flow saved `versions` times, each save a new version over the one before.
  ok(await master.request('POST', '/api/v1/flows', { name: 'versioned', yaml: yaml(0) }), 'create');
  const saves = [];
  for (let v = 2; v <= versions; v++) {
    const r = ok(
      await master.request('PUT', '/api/v1/flows/versioned', { yaml: yaml(v), base_version: v - 1, message: `v${v}` }),
      `save ${v}`,
    );
    saves.push(r.ms);
  }
  const last = saves.slice(-50);
  result.save = {
    nth_version_ms: round(saves.at(-1), 2),
    last_50_p50_ms: round(percentile(last, 50), 2),
    last_50_p99_ms: round(percentile(last, 99), 2),
  };
  result.load_average = loadavg().map((x) => round(x, 1));

  console.log(`${flows} flows on the ${result.store} store (seeded in ${result.seed_seconds} s)`);
  console.log(
    `GET /api/v1/flows (${result.client}), ${connections} connections, ${seconds} s: ${result.list.requests_per_s} req/s, p50 ${result.list.p50_ms} ms, p99 ${result.list.p99_ms} ms (target p99 < 10 ms), ${result.list.errors} errors (${result.list.timeouts} timeouts)`,
  );
  console.log(
    `saving version ${versions}: ${result.save.nth_version_ms} ms (last 50 saves: p50 ${result.save.last_50_p50_ms} ms, p99 ${result.save.last_50_p99_ms} ms; target < 5 ms)`,
  );
  console.log(`load average during the bench: ${result.load_average.join(' ')}`);
  console.log(JSON.stringify(result));
} finally {
  await master.stop();
}
