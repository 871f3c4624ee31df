// The latency probes of ws-fanout.mjs, in a process of their own: N clients of /api/v1/ws (the
// `ws` package, as a browser would) that note, for each message, its receipt minus its event's
// `timestamp_ms` (the same clock: one machine). Alone in their process, so that the bench's other
// clients (which read and drop 100 streams) do not delay their receipt; few, because one process
// handles its clients' messages one after another, and ten of them measured mostly each other (a
// batch reaches ten sockets at once; the tenth client's copy waited for the nine before it).
//
//   node ws-probes.mjs <ws url> <count>     (the bearer token, if any, in RUNNER_BENCH_TOKEN)
//
// Prints "ready" once every client is connected; on SIGTERM, one JSON line: {"latencies":[...]}.
import { WebSocket } from 'ws';

const [url, countText] = process.argv.slice(2);
const count = Number(countText);
const token = process.env.RUNNER_BENCH_TOKEN;
const latencies = [];
let open = 0;
for (let i = 0; i < count; i++) {
  const ws = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  ws.on('open', () => {
    if (++open === count) console.log('ready');
  });
  ws.on('error', (error) => {
    console.error(`probe ${i}: ${error.message}`);
    process.exit(1);
  });
  ws.on('message', (data) => {
    const now = Date.now();
    const text = String(data);
    // Only the timestamp matters: no full parse, so a probe costs its process little.
    const at = text.indexOf('"timestamp_ms":');
    if (at >= 0) latencies.push(now - Number.parseInt(text.slice(at + 15), 10));
  });
}
process.on('SIGTERM', () => {
  process.stdout.write(`${JSON.stringify({ latencies })}\n`, () => process.exit(0));
});
