// Keystroke-to-echo latency of the terminal through a real agent on loopback: a `runner server`
// and a `runner agent start`, a session opened on the agent, then one character typed at a time
// over the session's WebSocket (browser -> master -> gRPC -> agent -> PTY -> shell echo -> back),
// timed from the send to the frame that carries it back. Target: p99 under 30 ms.
//   nice node test/bench/terminal-echo.mjs [keystrokes=500]
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { bin, percentile, round, startMaster } from './support/master.mjs';

const KEYSTROKES = Number(process.argv[2] ?? 500);
const master = await startMaster();
const agentDir = mkdtempSync(join(tmpdir(), 'runner-bench-agent-'));
const agent = spawn(
  process.execPath,
  [bin, 'agent', 'start', 'bench-term', '--master', `127.0.0.1:${master.grpcPort}`],
  {
    env: {
      ...process.env,
      RUNNER_DATA_DIR: agentDir,
      RUNNER_JOIN_TOKEN: readFileSync(join(master.dataDir, 'agent-token'), 'utf8').trim(),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
let agentLog = '';
agent.stderr.on('data', (d) => (agentLog += d));
agent.stdout.on('data', (d) => (agentLog += d));
try {
  for (let i = 0; !/registered with master/.test(agentLog); i++) {
    if (i > 600) throw new Error(`the agent did not register in 30 s:\n${agentLog}`);
    await sleep(50);
  }
  const opened = await master.request('POST', '/api/v1/terminal/sessions', {
    target: 'bench-term',
    rows: 24,
    cols: 80,
  });
  if (opened.status !== 201) throw new Error(`opening a session: ${opened.status} ${JSON.stringify(opened.body)}`);
  const ws = new WebSocket(`ws://127.0.0.1:${master.httpPort}/api/v1/terminal/sessions/${opened.body.id}/socket`, {
    headers: master.headers(),
  });
  let received = '';
  let waiting;
  ws.on('message', (data, binary) => {
    if (!binary) return;
    received += data.toString();
    if (waiting && received.includes(waiting.char)) waiting.resolve(performance.now());
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  // The shell's prompt first; then `cat` echoes every key through the PTY, nothing else printed.
  await sleep(1500);
  ws.send(Buffer.from('stty -echoctl; cat >/dev/null\r'), { binary: true });
  await sleep(500);
  const alphabet = 'abcdefghijklmnopqrstuvwxyz';
  const samples = [];
  for (let i = 0; i < KEYSTROKES; i++) {
    const char = alphabet[i % alphabet.length];
    received = '';
    const echoed = new Promise((resolve) => (waiting = { char, resolve }));
    const sent = performance.now();
    ws.send(Buffer.from(char), { binary: true });
    const at = await Promise.race([echoed, sleep(5000).then(() => undefined)]);
    if (at === undefined) throw new Error(`no echo of keystroke ${i} in 5 s`);
    samples.push(at - sent);
    // A typist's pace, not a flood: each keystroke alone on the wire.
    await sleep(5);
  }
  samples.sort((a, b) => a - b);
  const [one, five, fifteen] = loadavg();
  console.log(
    JSON.stringify({
      bench: 'terminal-echo',
      keystrokes: KEYSTROKES,
      p50_ms: round(percentile(samples, 50)),
      p90_ms: round(percentile(samples, 90)),
      p99_ms: round(percentile(samples, 99)),
      max_ms: round(samples.at(-1)),
      target_p99_ms: 30,
      load: [round(one), round(five), round(fifteen)],
      cores: (await import('node:os')).cpus().length,
    }),
  );
  ws.close();
} finally {
  agent.kill('SIGTERM');
  await master.stop();
}
