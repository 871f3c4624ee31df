// The metrics plugin's cost (issue 21): a scrape of GET /metrics on a real `runner server` with
// 1,000 simulated agents (agent-sim.mjs: real clients, each answering the master's metrics call
// with a fixed host), target under 20 ms; then rest-throughput.mjs with the metrics plugins and
// without them (the same build, its plugins directory less `metrics` and `module-metrics` through
// RUNNER_BUILTIN_PLUGINS_DIR), alternated --pairs times, side by side.
//
//   npm run build && node test/bench/metrics-scrape.mjs [--agents 1000] [--scrapes 200] [--pairs 2] [--seconds 15] [--rate 200]
//
// Prints readable lines, then one JSON line.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { percentile, root, round, startMaster, startSimAgents } from './support/master.mjs';

const { values } = parseArgs({
  options: {
    agents: { type: 'string', default: '1000' },
    scrapes: { type: 'string', default: '200' },
    pairs: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '15' },
    // rest-throughput's rate: its 200/s bar, or lower on a machine too busy for it, to see the cost.
    rate: { type: 'string', default: '200' },
  },
});
const agents = Number(values.agents);
const TARGET_MS = 20;

/** The exposition's value of a series without labels, or the number of series of a name. */
const valueOf = (text, name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
const seriesOf = (text, name) => text.split('\n').filter((line) => line.startsWith(`${name}{`)).length;

async function scrapeLatency() {
  // An agent is asked for its memory and disk bytes a second after it connects, then every 30 s.
  const master = await startMaster();
  const sim = startSimAgents(master, agents);
  try {
    await sim.ready;
    const deadline = Date.now() + 180_000;
    let text = '';
    for (;;) {
      text = (await master.request('GET', '/metrics')).body;
      if (seriesOf(text, 'flow_agent_memory_usage_bytes') >= agents) break;
      if (Date.now() > deadline) throw new Error(`agents' bytes missing after 180 s:\n${text.slice(0, 400)}`);
      await sleep(500);
    }
    // Beside each scrape, the master's own time for it (its previous exposition, as it reports it)
    // and a health check's round trip: on a busy machine most of a round trip is waiting for a CPU.
    const times = [];
    const inMaster = [];
    const health = [];
    for (let i = 0; i < Number(values.scrapes); i++) {
      const scraped = await master.request('GET', '/metrics');
      times.push(scraped.ms);
      inMaster.push(valueOf(scraped.body, 'runner_metrics_exposition_duration_seconds') * 1000);
      health.push((await master.request('GET', '/api/v1/health')).ms);
    }
    const result = {
      agents_connected: valueOf(text, 'flow_agents_connected'),
      agent_series: ['cpu_usage_percent', 'memory_usage_bytes', 'disk_usage_bytes']
        .map((m) => seriesOf(text, `flow_agent_${m}`))
        .reduce((a, b) => a + b, 0),
      exposition_bytes: Buffer.byteLength(text),
      scrape_p50_ms: round(percentile(times, 50)),
      scrape_p99_ms: round(percentile(times, 99)),
      scrape_max_ms: round(Math.max(...times)),
      exposition_in_master_p50_ms: round(percentile(inMaster.slice(1), 50)),
      exposition_in_master_p99_ms: round(percentile(inMaster.slice(1), 99)),
      health_p50_ms: round(percentile(health, 50)),
      health_p99_ms: round(percentile(health, 99)),
    };
    console.log(
      `/metrics with ${result.agents_connected} agents (${result.agent_series} agent series, ${result.exposition_bytes} bytes): p50 ${result.scrape_p50_ms} ms, p99 ${result.scrape_p99_ms} ms, max ${result.scrape_max_ms} ms over ${times.length} scrapes (target p99 < ${TARGET_MS} ms: ${result.scrape_p99_ms < TARGET_MS ? 'met' : 'MISSED'})`,
    );
    console.log(
      `  in the master: exposition p50 ${result.exposition_in_master_p50_ms} ms, p99 ${result.exposition_in_master_p99_ms} ms; GET /api/v1/health beside it: p50 ${result.health_p50_ms} ms, p99 ${result.health_p99_ms} ms`,
    );
    return result;
  } finally {
    sim.child.kill('SIGKILL');
    await master.stop();
  }
}

/** The built-in plugins without the metrics ones, as links to the real packages. */
function pluginsWithoutMetrics() {
  const dir = mkdtempSync(join(tmpdir(), 'runner-bench-plugins-'));
  for (const name of readdirSync(join(root, 'plugins'))) {
    if (name !== 'metrics' && name !== 'module-metrics') symlinkSync(join(root, 'plugins', name), join(dir, name));
  }
  return dir;
}

/** One rest-throughput.mjs run; resolves with its JSON line. */
function restThroughput(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(root, 'test/bench/rest-throughput.mjs'), '--seconds', values.seconds, '--rate', values.rate],
      {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', () => {
      const line = out.trim().split('\n').at(-1);
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`rest-throughput.mjs printed no result:\n${out}`));
      }
    });
  });
}

const scrape = await scrapeLatency();
const without = pluginsWithoutMetrics();
const runs = { with_metrics: [], without_metrics: [] };
for (let pair = 0; pair < Number(values.pairs); pair++) {
  // Alternated, so a busy machine's load falls on both sides alike.
  runs.with_metrics.push(await restThroughput({}));
  runs.without_metrics.push(await restThroughput({ RUNNER_BUILTIN_PLUGINS_DIR: without }));
}
const brief = (r) => `${r.runs_per_minute}/min p50 ${r.p50_ms} p99 ${r.p99_ms} ms${r.meets_target ? '' : ' (missed)'}`;
console.log(`rest-throughput, two-task runs at ${values.rate}/s:`);
for (let i = 0; i < runs.with_metrics.length; i++) {
  console.log(`  with metrics: ${brief(runs.with_metrics[i])}   without: ${brief(runs.without_metrics[i])}`);
}
console.log(JSON.stringify({ bench: 'metrics-scrape', ...scrape, rest_throughput: runs }));
