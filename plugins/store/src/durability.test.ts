import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordingLogger } from '../test-fixtures/recording-logger.js';
import { lockPath } from './lock.js';
import { openStore } from './sql-store.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const fixture = join(here, '..', 'test-fixtures', 'burst-writer.mjs');
let storeModule: string;

/**
 * Child processes cannot load TypeScript, so the store is bundled from source into one ESM file;
 * packages other than the SDK stay external, resolved to absolute paths. This keeps the test
 * independent of whatever state other packages' dist/ directories are in.
 */
beforeAll(async () => {
  const require = createRequire(import.meta.url);
  const outfile = join(mkdtempSync(join(tmpdir(), 'store-bundle-')), 'sql-store.mjs');
  await build({
    entryPoints: [join(here, 'sql-store.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['runner-source'],
    logLevel: 'silent',
    plugins: [
      {
        name: 'external-packages',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => {
            if (args.path.startsWith('node:') || args.path.startsWith('@runner/')) return undefined;
            return { path: pathToFileURL(require.resolve(args.path)).href, external: true };
          });
        },
      },
    ],
  });
  storeModule = pathToFileURL(outfile).href;
});

/** Runs the burst writer until `acks` writes were acknowledged, SIGKILLs it, returns every acknowledged id. */
async function burstUntilKilled(dataDir: string, firstId: number, acks: number, snapshotBytes: number) {
  const child = spawn(process.execPath, [fixture, dataDir, String(firstId), String(snapshotBytes)], {
    env: { ...process.env, RUNNER_STORE_MODULE: storeModule },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ids: number[] = [];
  const exited = once(child, 'exit');
  // Lines written before the kill are still in the pipe and count: they were acknowledged.
  for await (const line of createInterface({ input: child.stdout })) {
    if (!/^\d+$/.test(line)) continue;
    ids.push(Number(line));
    if (ids.length === acks) child.kill('SIGKILL');
  }
  const [code, signal] = await exited;
  if (signal !== 'SIGKILL') throw new Error(`burst writer ended with code ${code} before the kill:\n${stderr}`);
  return { ids, stderr };
}

describe('durability', () => {
  it('keeps every acknowledged write across SIGKILLs in the middle of bursts and snapshots', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'store-durable-'));
    const acknowledged: number[] = [];
    const stderrs: string[] = [];
    // A small snapshot threshold puts snapshots (and journal rotations) inside the bursts.
    for (const [round, acks] of [300, 4000, 1500].entries()) {
      const { ids, stderr } = await burstUntilKilled(dataDir, (round + 1) * 1_000_000, acks, 32 * 1024);
      expect(ids.length).toBeGreaterThanOrEqual(acks);
      acknowledged.push(...ids);
      stderrs.push(stderr);
    }
    // Each later round found the killed writer's lock and took it over.
    expect(stderrs[1]).toContain(`took over the stale lock ${lockPath(dataDir)}`);
    expect(stderrs.join('')).toMatch(/"message":"snapshot .* written/);

    const store = await openStore(dataDir, recordingLogger());
    try {
      const present = new Set((await store.all<{ id: number }>('SELECT id FROM items')).map((row) => row.id));
      expect(acknowledged.filter((id) => !present.has(id))).toEqual([]);
      expect(present.size).toBeGreaterThanOrEqual(acknowledged.length);
    } finally {
      await store.close();
    }
  });

  it('lets exactly one of two processes racing for a stale lock open the store', async () => {
    const script = `
      const { openStore } = await import(process.env.RUNNER_STORE_MODULE);
      const logger = { debug() {}, info() {}, warn() {}, error() {}, child() { return logger; } };
      try {
        const store = await openStore(process.argv[1], logger);
        process.stdout.write('won\\n');
        process.stdin.resume();
        process.stdin.on('end', () => store.close().then(() => process.exit(0)));
      } catch (error) {
        process.stdout.write(error.code + '\\n');
      }`;
    for (let round = 0; round < 3; round++) {
      const dataDir = mkdtempSync(join(tmpdir(), 'store-race-'));
      const dead = spawn(process.execPath, ['-e', '']);
      await once(dead, 'exit');
      writeFileSync(
        lockPath(dataDir),
        JSON.stringify({ pid: dead.pid, started_at: '2024-01-01T00:00:00Z', hostname: hostname() }),
      );
      const racers = [0, 1].map(() =>
        spawn(process.execPath, ['--input-type=module', '-e', script, dataDir], {
          env: { ...process.env, RUNNER_STORE_MODULE: storeModule },
          stdio: ['pipe', 'pipe', 'inherit'],
        }),
      );
      const outcomes = await Promise.all(
        racers.map(async (racer) => {
          const [line] = await once(createInterface({ input: racer.stdout! }), 'line');
          return line as string;
        }),
      );
      for (const racer of racers) racer.stdin!.end();
      await Promise.all(racers.map((racer) => (racer.exitCode === null ? once(racer, 'exit') : undefined)));
      expect(outcomes.sort()).toEqual(['conflict', 'won']);
    }
  });
});
