// The scheduler's real-time proof (issue 20): on a real master with the machine's clock, a job
// every minute fires twice in two minutes, and each run's notification reaches a local SMTP server
// (smtp-server) and a local webhook receiver. Costs about 2-3 real minutes, so it is a script, not
// a test; the suite's fast equivalents are plugins/scheduler/src/scheduler.test.ts (notifications)
// and test/e2e/scheduler-*.test.ts (a real master, a fast scheduler clock). Prints what it saw.
// Run: npm run build && node test/proofs/scheduler-realtime.mjs
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { startMaster } from '../bench/support/master.mjs';

const mails = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  onData(stream, _session, done) {
    let text = '';
    stream.on('data', (chunk) => (text += chunk));
    stream.on('end', () => (mails.push({ at: new Date().toISOString(), text }), done()));
  },
});
await new Promise((resolve) => smtp.listen(0, '127.0.0.1', resolve));
const hooks = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => (hooks.push({ at: new Date().toISOString(), body: JSON.parse(body) }), res.end('ok')));
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));

const master = await startMaster({
  env: { RUNNER_SCHEDULER_SMTP_URL: `smtp://127.0.0.1:${smtp.server.address().port}` },
});
try {
  mkdirSync(join(master.dataDir, 'workflows'), { recursive: true });
  writeFileSync(
    join(master.dataDir, 'workflows', 'tick.yaml'),
    'version: "1.0"\ntasks:\n  - name: tick\n    exec: { script: "log.info(\'tick\'); return true" }\n',
  );
  const added = await master.request('POST', '/api/v1/scheduler/jobs', {
    name: 'every-minute',
    workflow: 'tick.yaml',
    schedule: '* * * * *',
    timezone: 'UTC',
    notify_on: 'both',
    notify_webhook: `http://127.0.0.1:${receiver.address().port}/hook`,
    notify_email: ['ops@example.test'],
  });
  if (added.status !== 201) throw new Error(`add: ${added.status} ${JSON.stringify(added.body)}`);
  const began = Date.now();
  console.log(
    `job added at ${new Date(began).toISOString()}; next runs ${added.body.next_runs.slice(0, 2).join(', ')}`,
  );
  let slots = [];
  while (Date.now() - began < 150_000) {
    await sleep(2000);
    slots = (await master.request('GET', '/api/v1/scheduler/jobs/every-minute/history')).body.slots;
    const done = slots.filter((s) => s.notice);
    if (done.length >= 2 && mails.length >= 2 && hooks.length >= 2) break;
  }
  const seconds = Math.round((Date.now() - began) / 1000);
  console.log(`after ${seconds} s: ${slots.length} slots`);
  for (const s of [...slots].reverse())
    console.log(
      `  slot ${s.slot_at}: ${s.outcome}, started ${s.started_at} (${Date.parse(s.started_at) - Date.parse(s.slot_at)} ms late), run ${s.run_id} ${s.run_status}; notice: ${s.notice}`,
    );
  console.log(`SMTP server received ${mails.length} mails:`);
  for (const m of mails) console.log(`  ${m.at}: ${/^Subject: .*$/m.exec(m.text)?.[0]}`);
  console.log(`webhook receiver received ${hooks.length} posts:`);
  for (const h of hooks) console.log(`  ${h.at}: ${JSON.stringify(h.body)}`);
  const ok = slots.filter((s) => s.outcome === 'started').length >= 2 && mails.length >= 2 && hooks.length >= 2;
  console.log(ok ? 'PROOF HOLDS: two slots fired in real time, both notified by e-mail and webhook' : 'PROOF FAILED');
  process.exitCode = ok ? 0 : 1;
} finally {
  await master.stop();
  smtp.close();
  receiver.close();
}
