// Where the agents page's main-thread time goes while it scrolls: a real master with `agents`
// simulated agents (paused during the scrolls, so only the page's own work is measured), three
// 3-second scrolls top to bottom with their frame deltas, then a CPU profile (CDP Profiler) of one
// more, its 25 heaviest functions by self time. (program) and scrollTo are the browser's style,
// layout and paint, forced by each frame's scroll.
//
//   npm run build && node test/bench/agents-scroll-profile.mjs [agents, default 1000]
import { chromium } from 'playwright-core';
import { startMaster, startSimAgents } from './support/master.mjs';
import { scrollFrames } from './support/scroll.mjs';
const agents = Number(process.argv[2] ?? 1000);
const master = await startMaster({ env: { RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1' } });
const sims = startSimAgents(master, agents);
await sims.ready;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const ctx = await browser.newContext({
  viewport: { width: 1280, height: 800 },
  baseURL: master.base,
  extraHTTPHeaders: master.headers(),
});
const page = await ctx.newPage();
await page.goto('/agents');
await page
  .getByRole('status')
  .filter({ hasText: `${agents} agents` })
  .waitFor({ timeout: 60000 });
sims.child.kill('SIGSTOP');
for (let i = 0; i < 3; i++) {
  const f = await scrollFrames(page);
  const med = [...f].sort((a, b) => a - b)[Math.floor(f.length / 2)];
  console.log(
    `frames ${f.length} dropped ${f.filter((d) => d > med * 1.5).length} worst ${Math.round(Math.max(...f))}`,
  );
}
// A profile of one scroll: where the main thread's time goes.
const cdp = await ctx.newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
await cdp.send('Profiler.start');
await scrollFrames(page);
const { profile } = await cdp.send('Profiler.stop');
const self = new Map();
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = profile.timeDeltas;
const counts = new Map();
profile.samples.forEach((id, i) => counts.set(id, (counts.get(id) ?? 0) + (dt[i] ?? 0)));
for (const [id, us] of counts) {
  const n = byId.get(id);
  const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
  self.set(k, (self.get(k) ?? 0) + us);
}
console.log(
  [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([k, us]) => `${Math.round(us / 1000)} ms ${k}`)
    .join('\n'),
);
sims.child.kill('SIGCONT');
await browser.close();
sims.child.kill('SIGTERM');
await master.stop();
