// Child process of durability.test.ts: opens a store and keeps 50 writes in flight until killed,
// printing each id on stdout once its write is acknowledged (durable). Usage:
//   node burst-writer.mjs <dataDir> <firstId> [snapshotJournalBytes]
// The store module defaults to the built plugin; RUNNER_STORE_MODULE overrides it (the test
// passes a bundle of the TypeScript source, so it never depends on another package's build).
const modulePath = process.env.RUNNER_STORE_MODULE ?? new URL('../dist/src/sql-store.js', import.meta.url).href;
const { openStore } = await import(modulePath);

const [dataDir, firstId, threshold] = process.argv.slice(2);
const log = (level) => (message, fields) => process.stderr.write(`${JSON.stringify({ level, message, ...fields })}\n`);
const logger = { debug: () => {}, info: log('info'), warn: log('warn'), error: log('error') };
logger.child = () => logger;

const store = await openStore(dataDir, logger, threshold ? { snapshotJournalBytes: Number(threshold) } : {});
await store.migrate('burst', [
  { id: 1, description: 'items', sql: 'CREATE TABLE items (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)' },
]);
process.stdout.write('ready\n');

let next = Number(firstId);
async function writer() {
  for (;;) {
    const id = next++;
    await store.run('INSERT INTO items (id, payload) VALUES (?, ?)', [id, `payload ${id} `.repeat(8)]);
    // stdout is a pipe, which Node writes synchronously on Linux: once written, the parent gets it.
    process.stdout.write(`${id}\n`);
  }
}
for (let i = 0; i < 50; i++) {
  writer().catch((error) => {
    process.stderr.write(`writer failed: ${error.stack}\n`);
    process.exit(1);
  });
}
