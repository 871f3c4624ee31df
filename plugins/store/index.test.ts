import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConflictError,
  HttpRouterRef,
  StoreRef,
  ClusterRef,
  createRedactor,
  type CommandContext,
  type CommandSpec,
  type StoreStats,
} from '@runner/plugin-sdk';
import { createTestKernel, staticConfig, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as httpPlugin } from '@runner/plugin-http';
import { plugin, readLockHolder } from './index.js';
import { lockHolderMaster } from './src/lock-holder-master.js';
import { recordingLogger } from './test-fixtures/recording-logger.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function commandContext(dataDir: string, config: Record<string, unknown> = {}) {
  let out = '';
  const stdout = new Writable({
    write(chunk, _encoding, callback) {
      out += String(chunk);
      callback();
    },
  });
  const ctx: CommandContext = {
    config: staticConfig(config, dataDir),
    logger: recordingLogger(),
    stdout,
    stderr: stdout,
    stdin: process.stdin,
    isTTY: false,
    plugins: [],
    commands: [],
    boot: () => Promise.reject(new Error('not used by db commands')),
    version: '0.0.0-test',
    redactor: createRedactor(),
  };
  return { ctx, output: () => out };
}

function db(name: string): CommandSpec {
  const found = plugin.commands?.find((c) => c.name === 'db')?.subcommands?.find((c) => c.name === name);
  if (found?.run === undefined) throw new Error(`no db ${name}`);
  return found;
}

async function runDb(dataDir: string, name: string, args: string[] = [], options: Record<string, unknown> = {}) {
  const { ctx, output } = commandContext(dataDir);
  const code = await db(name).run!({ args, options }, ctx);
  return { code: code ?? 0, output: output() };
}

/** The store alone, or with the real HTTP plugin on an ephemeral loopback port (it writes master.json at ready). */
async function boot(dataDir: string, withHttp = false): Promise<TestKernel> {
  const kernel = await createTestKernel({
    plugins: withHttp ? [httpPlugin, plugin] : [plugin],
    dataDir,
    profile: 'master',
    config: withHttp ? { 'http.port': 0, 'http.bind_address': '127.0.0.1' } : {},
  });
  cleanups.push(() => kernel.stop());
  const store = kernel.get(StoreRef);
  await store.migrate('test', [
    { id: 1, description: 'items', sql: 'CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)' },
  ]);
  await store.transaction(
    ['a', 'b', 'c'].map((name) => ({ sql: 'INSERT INTO items (name) VALUES (?)', params: [name] })),
  );
  return kernel;
}

describe('store plugin', () => {
  it('declares itself for master and embedded with the db commands', () => {
    expect(plugin.id).toBe('store');
    expect(plugin.profiles).toEqual(['master', 'embedded']);
    expect(plugin.provides).toEqual([StoreRef, ClusterRef]);
    expect(plugin.commands?.[0].subcommands?.map((c) => c.name)).toEqual([
      'restore',
      'copy',
      'repair',
      'vacuum',
      'stats',
      'backup',
    ]);
  });

  it('keeps sql.js and the store implementation out of index.ts static imports', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'store-graph-'));
    const { metafile } = await build({
      entryPoints: [join(here, 'index.ts')],
      outdir,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      conditions: ['runner-source'],
      external: ['sql.js', 'tapable'],
      metafile: true,
      write: false,
      logLevel: 'silent',
    });
    const entry = Object.values(metafile.outputs).find((o) => o.entryPoint?.endsWith('index.ts'));
    const inputs = Object.keys(entry?.inputs ?? {}).map((p) =>
      relative(join(here, '..', '..'), join(process.cwd(), p)),
    );
    expect(inputs).toContain('plugins/store/src/commands.ts');
    expect(inputs.filter((p) => /store\/src\/(sql-store|journal|sqljs|restore)\.ts$/.test(p))).toEqual([]);
    expect(entry?.imports.filter((i) => i.path === 'sql.js')).toEqual([]);
  });

  it('provides the store, registers the db routes, and releases the data directory at stop', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'store-plugin-'));
    const kernel = await boot(dataDir, true);
    await kernel.ready();
    const router = kernel.get(HttpRouterRef);
    expect(
      router
        .routes()
        .filter((r) => r.path.startsWith('/api/v1/db/'))
        .map((r) => `${r.method} ${r.path}`),
    ).toEqual(['GET /api/v1/db/stats', 'GET /api/v1/db/backup', 'POST /api/v1/db/vacuum']);
    expect((await readLockHolder(dataDir))?.pid).toBe(process.pid);
    const base = `http://127.0.0.1:${router.address()!.port}/api/v1`;
    const stats = (await (await fetch(`${base}/db/stats`)).json()) as StoreStats;
    expect(stats.tables.find((t) => t.name === 'items')?.rows).toBe(3);
    const refused = await fetch(`${base}/db/backup?compress=yes`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { field: string } }).error.field).toBe('compress');
    await kernel.stop();
    expect(await readLockHolder(dataDir)).toBeNull();
    expect(existsSync(join(dataDir, 'store', 'snapshot.db'))).toBe(true);
  });

  it("leaves an embedded kernel's few writes in the journal at stop, for the next start to replay", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'store-plugin-'));
    const embedded = await createTestKernel({ plugins: [plugin], dataDir, profile: 'embedded' });
    const store = embedded.get(StoreRef);
    await store.migrate('test', [{ id: 1, description: 'items', sql: 'CREATE TABLE items (name TEXT)' }]);
    await store.run("INSERT INTO items (name) VALUES ('kept')");
    await embedded.stop();
    expect(existsSync(join(dataDir, 'store', 'snapshot.db'))).toBe(false);
    expect(await readLockHolder(dataDir)).toBeNull();

    // A master folds it at stop, as before.
    const master = await createTestKernel({ plugins: [plugin], dataDir, profile: 'master' });
    expect(await master.get(StoreRef).all('SELECT name FROM items')).toEqual([{ name: 'kept' }]);
    await master.stop();
    expect(existsSync(join(dataDir, 'store', 'snapshot.db'))).toBe(true);
  });

  it('refuses a bad store.snapshot_journal_bytes, naming the key', async () => {
    await expect(
      createTestKernel({ plugins: [plugin], config: { store: { snapshot_journal_bytes: 0 } } }),
    ).rejects.toThrow('config store.snapshot_journal_bytes (from test): expected an integer of at least 1, got 0');
    await expect(
      createTestKernel({ plugins: [plugin], config: { 'store.snapshot_journal_bytes': 'big' } }),
    ).rejects.toThrow('config store.snapshot_journal_bytes (from test): expected an integer of at least 1, got "big"');
  });
});

describe('db commands with no master', () => {
  it('backup, vacuum, stats and restore open the data directory themselves', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'store-cli-'));
    await (await boot(dataDir)).stop();
    const backup = join(mkdtempSync(join(tmpdir(), 'store-cli-out-')), 'b.db.gz');

    const backedUp = await runDb(dataDir, 'backup', [], { output: backup, compress: true });
    expect(backedUp.output).toMatch(new RegExp(`^backup written to ${backup} \\(.+, gzip\\)\\n$`));
    expect([...readFileSync(backup).subarray(0, 2)]).toEqual([0x1f, 0x8b]);

    expect((await runDb(dataDir, 'vacuum')).output).toMatch(/^vacuum: .+ -> .+\n$/);

    const text = await runDb(dataDir, 'stats');
    expect(text.output).toContain(`store     ${join(dataDir, 'store')}`);
    expect(text.output).toMatch(/\nitems\s+3\n/);
    const json = JSON.parse((await runDb(dataDir, 'stats', [], { output: 'json' })).output) as StoreStats;
    expect(json.tables.find((t) => t.name === 'items')).toEqual({ name: 'items', rows: 3 });

    await expect(runDb(dataDir, 'restore', [backup])).rejects.toThrow(/gzip-compressed; restore it with --decompress/);
    const restored = await runDb(dataDir, 'restore', [backup], { decompress: true });
    expect(restored.output).toMatch(new RegExp(`^restored ${backup} as ${join(dataDir, 'store', 'snapshot.db')}`));
    expect(await readLockHolder(dataDir)).toBeNull();
  });

  it('asks for --output', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'store-cli-'));
    await expect(runDb(dataDir, 'backup')).rejects.toThrow('runner db backup needs --output <path>');
  });
});

describe('db commands with a live master', () => {
  async function master() {
    const dataDir = mkdtempSync(join(tmpdir(), 'store-master-'));
    const kernel = await boot(dataDir, true);
    // The HTTP plugin listens and writes master.json, as a real master does.
    await kernel.ready();
    return { dataDir, kernel };
  }

  it('backup, vacuum and stats go through the master REST API', async () => {
    const { dataDir, kernel } = await master();
    const store = kernel.get(StoreRef);

    const json = JSON.parse((await runDb(dataDir, 'stats', [], { output: 'json' })).output) as StoreStats;
    expect(json).toEqual(await store.stats());

    const outDir = mkdtempSync(join(tmpdir(), 'store-master-out-'));
    const previous = process.cwd();
    process.chdir(outDir);
    cleanups.push(() => process.chdir(previous));
    // A relative --output is resolved by the CLI, since the master's directory means nothing here.
    const { output } = await runDb(dataDir, 'backup', [], { output: 'copy.db' });
    expect(output).toContain(`backup written to ${join(outDir, 'copy.db')}`);
    expect(readFileSync(join(outDir, 'copy.db')).subarray(0, 15).toString()).toBe('SQLite format 3');

    await store.run('DELETE FROM items');
    expect((await runDb(dataDir, 'vacuum')).output).toMatch(/^vacuum: /);
    expect((await store.stats()).journalRecords).toBe(0);
  });

  it('refuses restore, naming the master pid', async () => {
    const { dataDir } = await master();
    const backup = join(mkdtempSync(join(tmpdir(), 'store-master-out-')), 'x.db');
    writeFileSync(backup, 'irrelevant');
    const error = await runDb(dataDir, 'restore', [backup]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as Error).message).toContain(`while runner process ${process.pid} uses it`);
  });

  it('passes the master error through, and says so when master.json is missing', async () => {
    const { dataDir } = await master();
    // Where the backup goes is checked here, before the master is asked for anything.
    await expect(runDb(dataDir, 'backup', [], { output: join(dataDir, 'store', 'x.db') })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('is inside the store directory'),
    });
    const holder = (await readLockHolder(dataDir))!;
    const client = await lockHolderMaster(dataDir, holder);
    await expect(client.call('GET', '/db/backup?compress=maybe')).rejects.toMatchObject({
      code: 'invalid_input',
      status: 400,
      message: expect.stringMatching(/^query parameter compress: expected boolean[^()]*$/),
    });
    rmSync(join(dataDir, 'master.json'));
    await expect(runDb(dataDir, 'stats')).rejects.toMatchObject({
      code: 'master_unreachable',
      message: expect.stringContaining(`runner process ${process.pid} holds ${dataDir}`),
    });
  });
});
