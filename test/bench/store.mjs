// Store benchmark: durable writes per second and acknowledgement latency (p50/p99) with 1 and with
// 50 concurrent writers, then the time to open a ~50 MB database (snapshot plus a journal tail) in
// a fresh process, as at start-up. Runs against the built plugin: `node build.mjs` first.
//
//   node test/bench/store.mjs [--seconds 3] [--open-mb 50]
//
// Prints readable lines, then one JSON line with every figure (for test/bench/run-all.mjs).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const storeModule = new URL('../../plugins/store/dist/src/sql-store.js', import.meta.url).href;
const { openStore } = await import(storeModule).catch((error) => {
  console.error(`cannot load ${storeModule}: run \`node build.mjs\` first (${error.message})`);
  process.exit(1);
});

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '3' }, 'open-mb': { type: 'string', default: '50' } },
});
const seconds = Number(values.seconds);
const openMb = Number(values['open-mb']);

const quiet = {
  debug() {},
  info() {},
  warn: (m) => console.error(`warn: ${m}`),
  error: (m) => console.error(`error: ${m}`),
};
quiet.child = () => quiet;

const TABLE = {
  id: 1,
  description: 'bench',
  sql: 'CREATE TABLE bench (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, payload TEXT NOT NULL)',
};
const PAYLOAD = 'x'.repeat(100);

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

async function durableWrites(writers) {
  const dataDir = mkdtempSync(join(tmpdir(), 'store-bench-'));
  const store = await openStore(dataDir, quiet);
  try {
    await store.migrate('bench', [TABLE]);
    const insert = () => store.run('INSERT INTO bench (at, payload) VALUES (?, ?)', [Date.now(), PAYLOAD]);
    // Warm-up: JIT, statement cache, file allocation.
    const warm = performance.now() + 300;
    await Promise.all(
      Array.from({ length: writers }, async () => {
        while (performance.now() < warm) await insert();
      }),
    );

    const latencies = [];
    const cpu = process.cpuUsage();
    const started = performance.now();
    const end = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: writers }, async () => {
        while (performance.now() < end) {
          const t = performance.now();
          await insert();
          latencies.push(performance.now() - t);
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    latencies.sort((a, b) => a - b);
    return {
      writers,
      writes: latencies.length,
      writes_per_second: Math.round(latencies.length / elapsed),
      p50_ms: +percentile(latencies, 50).toFixed(3),
      p99_ms: +percentile(latencies, 99).toFixed(3),
      max_ms: +latencies[latencies.length - 1].toFixed(3),
      // All threads of the process (the libuv pool's fdatasync calls included), per write.
      cpu_us_per_write: Math.round((used.user + used.system) / latencies.length),
    };
  } finally {
    await store.close({ snapshot: false });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Builds a snapshot of about `mb` MB and a journal tail of single-row writes behind it. */
async function buildLargeStore(mb) {
  const dataDir = mkdtempSync(join(tmpdir(), 'store-bench-open-'));
  let snapshotLog = {};
  const logger = { ...quiet, info: (m, f) => (snapshotLog = /^snapshot /.test(m) ? f : snapshotLog) };
  const store = await openStore(dataDir, logger, { snapshotJournalBytes: 2 ** 40 });
  await store.migrate('bench', [TABLE]);
  const row = 'y'.repeat(1000);
  let id = 0;
  const bytes = async () => {
    const { pageCount, pageSize } = await store.stats();
    return pageCount * pageSize;
  };
  while ((await bytes()) < mb * 1e6) {
    await store.transaction(
      Array.from({ length: 1000 }, () => ({
        sql: 'INSERT INTO bench (id, at, payload) VALUES (?, ?, ?)',
        params: [++id, id, row],
      })),
    );
  }
  await store.snapshot();

  // A snapshot of the whole database taken while 50 writers keep writing: the export blocks the
  // event loop; the file write, fsync and rename do not.
  const during = [];
  let snapshotting = true;
  const writers = Array.from({ length: 50 }, async () => {
    while (snapshotting) {
      const t = performance.now();
      await store.run('INSERT INTO bench (id, at, payload) VALUES (?, ?, ?)', [++id, id, PAYLOAD]);
      during.push(performance.now() - t);
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  await store.snapshot();
  snapshotting = false;
  await Promise.all(writers);
  during.sort((a, b) => a - b);
  const snapshotUnderLoad = {
    export_ms: snapshotLog.export_ms,
    total_ms: snapshotLog.total_ms,
    writes_during: during.length,
    ack_p99_ms: +percentile(during, 99).toFixed(3),
    ack_max_ms: +during[during.length - 1].toFixed(3),
  };

  const tail = 20_000;
  for (let i = 0; i < tail; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, () =>
        store.run('INSERT INTO bench (id, at, payload) VALUES (?, ?, ?)', [++id, id, PAYLOAD]),
      ),
    );
  }
  await store.close({ snapshot: false });
  const dir = join(dataDir, 'store');
  const journalBytes = readdirSync(dir)
    .filter((n) => n.startsWith('journal-'))
    .reduce((sum, n) => sum + statSync(join(dir, n)).size, 0);
  return {
    dataDir,
    rows: id,
    tail,
    snapshotBytes: statSync(join(dir, 'snapshot.db')).size,
    journalBytes,
    snapshotUnderLoad,
  };
}

const OPEN_SCRIPT = `
  const t0 = performance.now();
  const { openStore } = await import(process.env.STORE_MODULE);
  const t1 = performance.now();
  let phases = {};
  const logger = { debug() {}, info(m, f) { if (/opened/.test(m)) phases = f; }, warn() {}, error() {}, child() { return logger; } };
  const store = await openStore(process.argv[1], logger);
  const t2 = performance.now();
  const rows = (await store.get('SELECT count(*) AS n FROM bench')).n;
  await store.close({ snapshot: false });
  process.stdout.write(JSON.stringify({ import_ms: t1 - t0, open_ms: t2 - t1, load_ms: phases.load_ms, replay_ms: phases.replay_ms, rows }));
`;

function openInFreshProcess(dataDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', OPEN_SCRIPT, dataDir], {
      env: { ...process.env, STORE_MODULE: storeModule },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`open child exited ${code}`)),
    );
  });
}

const results = { machine: { cpus: cpus().length, node: process.version, loadavg_at_start: loadavg()[0] } };
console.log(
  `store benchmark: ${seconds} s per writer count, open of a ~${openMb} MB database ` +
    `(${cpus().length} cores, load average ${loadavg()[0].toFixed(2)}: other work on the machine skews every figure)`,
);

for (const writers of [1, 50]) {
  const r = await durableWrites(writers);
  results[`writers_${writers}`] = r;
  console.log(
    `${String(writers).padStart(2)} writer(s): ${r.writes_per_second} durable writes/s, ack p50 ${r.p50_ms} ms, ` +
      `p99 ${r.p99_ms} ms, max ${r.max_ms} ms (${r.writes} writes, ${r.cpu_us_per_write} us CPU each)`,
  );
}

const large = await buildLargeStore(openMb);
const opens = [];
for (let i = 0; i < 3; i++) opens.push(await openInFreshProcess(large.dataDir));
opens.sort((a, b) => a.open_ms - b.open_ms);
const median = opens[1];
results.open = {
  snapshot_bytes: large.snapshotBytes,
  journal_bytes: large.journalBytes,
  journal_records: large.tail,
  rows: median.rows,
  import_ms: +median.import_ms.toFixed(1),
  open_ms: +median.open_ms.toFixed(1),
  load_snapshot_ms: median.load_ms,
  replay_journal_ms: median.replay_ms,
};
rmSync(large.dataDir, { recursive: true, force: true });
console.log(
  `open: ${(large.snapshotBytes / 1e6).toFixed(1)} MB snapshot + ${(large.journalBytes / 1e6).toFixed(1)} MB journal ` +
    `(${large.tail} records to replay): ${results.open.open_ms} ms (median of 3 fresh processes: ` +
    `${median.load_ms} ms loading sql.js and the snapshot, ${median.replay_ms} ms replaying; ` +
    `plus ${results.open.import_ms} ms to import the module; ${median.rows} rows)`,
);
const sul = large.snapshotUnderLoad;
results.snapshot_under_load = { snapshot_bytes: large.snapshotBytes, ...sul };
console.log(
  `snapshot of ${(large.snapshotBytes / 1e6).toFixed(1)} MB under 50 writers: export blocked ${sul.export_ms} ms, ` +
    `snapshot done in ${sul.total_ms} ms; ${sul.writes_during} writes meanwhile, ack p99 ${sul.ack_p99_ms} ms, ` +
    `max ${sul.ack_max_ms} ms`,
);
results.machine.loadavg_at_end = loadavg()[0];

const w50 = results.writers_50;
results.targets = {
  writes_per_second_50_writers_at_least_5000: w50.writes_per_second >= 5000,
  p99_ack_50_writers_under_20_ms: w50.p99_ms < 20,
};
console.log(
  `targets: >= 5000 writes/s with 50 writers: ${results.targets.writes_per_second_50_writers_at_least_5000 ? 'met' : 'MISSED'}; ` +
    `p99 ack < 20 ms: ${results.targets.p99_ack_50_writers_under_20_ms ? 'met' : 'MISSED'}`,
);
console.log(JSON.stringify({ bench: 'store', ...results }));
