// GitOps against real git repositories (the system git): a bare repository that a work clone
// pushes to, reached over file:// and over SSH (a real sshd on loopback, test/support/sshd.ts).
// The master is a test kernel with the real store, engine, flows, hooks, scheduler and HTTP
// plugins; on PostgreSQL two kernels share one database and sync at once.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { plugin as engine } from '@runner/plugin-engine';
import { plugin as eventHooks } from '@runner/plugin-event-hooks';
import { plugin as eventQueue } from '@runner/plugin-event-queue';
import { plugin as flows } from '@runner/plugin-flows';
import { plugin as http } from '@runner/plugin-http';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as moduleExec } from '@runner/plugin-modules-host';
import { plugin as notifications } from '@runner/plugin-notifications';
import { plugin as scheduler } from '@runner/plugin-scheduler';
import { plugin as secretsPlugin } from '@runner/plugin-secrets';
import { plugin as sshProfiles } from '@runner/plugin-ssh-profiles';
import {
  ConflictError,
  FlowsRef,
  HooksRef,
  HttpRouterRef,
  SchedulesRef,
  StoreRef,
  WorkflowEngineRef,
  WorkflowValidationError,
  SecretsRef,
  SshProfilesRef,
  type Logger,
  type Plugin,
  type Store,
} from '@runner/plugin-sdk';
import { createTestKernel, gate, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../../test/support/postgres.js';
import { sshdAvailable, startSshd, type TestSshd } from '../../../test/support/sshd.js';
import { openGitSession } from './auth.js';
import { GitOps } from './gitops.js';
import { CLAIM_MS } from './sync-claim.js';
import { plugin as gitops } from './plugin.js';
import { signature } from './webhook.js';

const root = mkdtempSync(join(tmpdir(), 'runner-gitops-'));
const AUTHOR = { name: 'Ada Lovelace', email: 'ada@example.org' };
const gitEnv = {
  ...process.env,
  HOME: root,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: AUTHOR.name,
  GIT_AUTHOR_EMAIL: AUTHOR.email,
  GIT_COMMITTER_NAME: AUTHOR.name,
  GIT_COMMITTER_EMAIL: AUTHOR.email,
};
const run = (args: string[], cwd?: string) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();

/** A bare repository on branch main and a clone that commits and pushes to it. */
class Repo {
  readonly work: string;
  constructor(readonly bare: string) {
    run(['init', '--quiet', '--bare', '--initial-branch=main', bare]);
    this.work = mkdtempSync(join(root, 'work-'));
    run(['init', '--quiet', '--initial-branch=main', this.work]);
    run(['remote', 'add', 'origin', bare], this.work);
  }

  /** Writes (or, for null, deletes) files, commits and pushes; the commit's id. */
  push(files: Record<string, string | null>, message: string): string {
    for (const [path, text] of Object.entries(files)) {
      const file = join(this.work, path);
      if (text === null) rmSync(file);
      else {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text);
      }
    }
    run(['add', '-A'], this.work);
    run(['commit', '--quiet', '-m', message], this.work);
    run(['push', '--quiet', 'origin', 'HEAD:main'], this.work);
    return run(['rev-parse', 'HEAD'], this.work);
  }
}

const flowYaml = (task: string) => `version: "1.0"\ntasks:\n  - name: ${task}\n    exec:\n      script: return true\n`;
// Line 6 holds a field no task has: the engine names it at 6:5.
const BROKEN = `version: "1.0"\ntasks:\n  - name: oops\n    exec:\n      script: return true\n    colour: red\n`;
const MANIFEST = `hooks:
  - name: tell-ops
    event: workflow.failed
    script: return true
schedules:
  - name: nightly-deploy
    flow: deploy
    schedule: "0 2 * * *"
    timezone: UTC
`;

// A sync of REFUSING changes every kind of thing, and its last write (the job named REFUSED)
// passes every check but is refused by the database (a trigger the test adds).
const REFUSED = 'refused-by-the-database';
const BEFORE_REFUSAL = `hooks:
  - name: page-ops
    event: workflow.failed
    script: return "before"
schedules:
  - name: hourly-report
    flow: report
    schedule: "0 * * * *"
    timezone: UTC
`;
const REFUSING = `hooks:
  - name: page-ops
    event: workflow.failed
    script: return "after"
  - name: page-more
    event: workflow.completed
    script: return true
schedules:
  - name: hourly-report
    flow: report
    schedule: "30 * * * *"
    timezone: UTC
  - name: ${REFUSED}
    flow: audit
    schedule: "0 3 * * *"
    timezone: UTC
`;

/** Makes the database refuse to insert the job named REFUSED (a trigger, in each store's SQL); returns its removal. */
async function refuseJob(store: Store): Promise<() => Promise<void>> {
  if (store.dialect === 'postgres') {
    await store.run(`CREATE OR REPLACE FUNCTION refuse_job() RETURNS trigger AS $$ BEGIN
      IF NEW.name = '${REFUSED}' THEN RAISE EXCEPTION 'the database refuses job ${REFUSED}'; END IF;
      RETURN NEW; END $$ LANGUAGE plpgsql`);
    await store.run(
      'CREATE TRIGGER refuse_job BEFORE INSERT ON scheduler_jobs FOR EACH ROW EXECUTE FUNCTION refuse_job()',
    );
    return async () => void (await store.run('DROP TRIGGER refuse_job ON scheduler_jobs'));
  }
  await store.run(`CREATE TRIGGER refuse_job BEFORE INSERT ON scheduler_jobs WHEN NEW.name = '${REFUSED}'
    BEGIN SELECT RAISE(ABORT, 'the database refuses job ${REFUSED}'); END`);
  return async () => void (await store.run('DROP TRIGGER refuse_job'));
}

/** Every row a sync writes (the claim's columns aside, which each attempt sets). */
async function syncedRows(store: Store) {
  const tables = ['flows', 'flow_versions', 'hooks', 'scheduler_jobs', 'gitops_items'];
  const rows = await Promise.all(tables.map((table) => store.all(`SELECT * FROM ${table} ORDER BY 1, 2`)));
  const state = await store.all(
    'SELECT commit_id, commit_author, commit_message, applied_at, applied_by FROM gitops_state',
  );
  return { ...Object.fromEntries(tables.map((table, i) => [table, rows[i]])), state };
}

/**
 * A sync whose late part fails (the database refuses its last job) leaves flows, hooks and
 * schedules exactly as they were, in the store and in the services' memory; the failure is told
 * with its reason. Once the database takes the job, the same commit applies whole.
 */
async function lateFailureChangesNothing(kernel: TestKernel, repo: Repo, sync: GitOps): Promise<void> {
  const store = kernel.get(StoreRef);
  const [hooks, schedules] = [kernel.get(HooksRef), kernel.get(SchedulesRef)];
  repo.push({ 'flows/report.yaml': flowYaml('report'), 'flows/runner.yaml': BEFORE_REFUSAL }, 'report hourly');
  await sync.sync('ann');
  const allow = await refuseJob(store);
  const head = repo.push(
    {
      'flows/report.yaml': flowYaml('report-v2'),
      'flows/audit.yaml': flowYaml('audit'),
      'flows/runner.yaml': REFUSING,
    },
    'change everything; the database refuses the last job',
  );
  const before = await syncedRows(store);
  await expect(sync.sync('ann')).rejects.toThrow(`the database refuses job ${REFUSED}`);
  expect(await syncedRows(store)).toEqual(before);
  expect(hooks.compare({ name: 'page-ops', event_type: 'workflow.failed', script: 'return "before"' })).toBe(
    'unchanged',
  );
  expect(hooks.compare({ name: 'page-more', event_type: 'workflow.completed', script: 'return true' })).toBe('created');
  expect(schedules.compare({ name: 'hourly-report', flow: 'report', schedule: '0 * * * *', timezone: 'UTC' })).toBe(
    'unchanged',
  );
  const failed = kernel.emitted.filter((event) => event.type === 'gitops.sync_failed').at(-1);
  expect(failed?.data).toMatchObject({ commit: head, by: 'ann', reason: expect.stringContaining('refuses job') });

  await allow();
  const applied = await sync.sync('ann');
  expect(applied.flows.map((f) => [f.name, f.change])).toEqual([
    ['audit', 'added'],
    ['report', 'changed'],
  ]);
  expect(applied.hooks).toEqual([
    { name: 'page-ops', change: 'changed' },
    { name: 'page-more', change: 'added' },
  ]);
  expect(applied.schedules).toEqual([
    { name: 'hourly-report', change: 'changed' },
    { name: REFUSED, change: 'added' },
  ]);
  expect(hooks.compare({ name: 'page-ops', event_type: 'workflow.failed', script: 'return "after"' })).toBe(
    'unchanged',
  );
}

const SECRET = 'webhook-shared-secret';
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const basePlugins: readonly Plugin[] = [store, template, luaRuntime, moduleExec, workflow, engine, flows];

async function master(
  config: Record<string, unknown>,
  extra: readonly Plugin[] = [eventQueue, eventHooks, notifications, scheduler, http, gitops],
) {
  const kernel = await createTestKernel({
    plugins: [...basePlugins, ...extra],
    profile: 'master',
    config: { 'engine.run_as': 'self', 'http.port': 0, 'http.bind_address': '127.0.0.1', ...config },
  });
  await kernel.ready();
  return kernel;
}

/** Waits (20 s at most) for the webhook's sync, which runs on after its answer, to apply `head`. */
async function appliedByWebhook(sync: GitOps, head: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await sync.status()).applied?.commit !== head && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  expect((await sync.status()).applied).toMatchObject({ commit: head, by: 'webhook' });
}

/** A GitOps service over a kernel's store, engine and flows, as the plugin builds it. */
function service(kernel: TestKernel, url: string, options: Partial<ConstructorParameters<typeof GitOps>[0]> = {}) {
  return new GitOps({
    store: kernel.get(StoreRef),
    engine: kernel.get(WorkflowEngineRef),
    flows: kernel.get(FlowsRef),
    settings: { url, branch: 'main', path: 'flows', manifest: 'runner.yaml' },
    mirrorDir: mkdtempSync(join(root, 'mirror-')),
    openSession: () => openGitSession(credentials(), {}),
    masterId: 'test',
    logger: silent,
    events: kernel.events,
    ...options,
  });
}
const credentials = (more: Partial<Parameters<typeof openGitSession>[0]> = {}) => ({
  sshKeyFile: '',
  sshKeySecret: '',
  passwordSecret: '',
  username: '',
  knownHosts: join(root, 'known_hosts'),
  acceptNewHostKey: false,
  sshProfile: '',
  ...more,
});

describe('GitOps over file://', () => {
  let repo: Repo;
  let kernel: TestKernel;
  let sync: GitOps;
  let base = '';

  beforeAll(async () => {
    repo = new Repo(join(root, 'origin.git'));
    repo.push({ 'flows/deploy.yaml': flowYaml('one'), 'flows/runner.yaml': MANIFEST, 'README.md': '# ops\n' }, 'first');
    kernel = await master({
      'gitops.url': `file://${repo.bare}`,
      'gitops.path': 'flows',
      'gitops.webhook_secret': SECRET,
    });
    base = `http://127.0.0.1:${kernel.get(HttpRouterRef).address()?.port}/api/v1/gitops`;
    sync = service(kernel, `file://${repo.bare}`, { hooks: kernel.get(HooksRef), schedules: kernel.get(SchedulesRef) });
  }, 30_000);
  afterAll(() => kernel?.stop());

  it('a push followed by sync makes a flow version carrying the commit; diff before it shows the change', async () => {
    const first = await sync.sync('ann');
    expect(first.flows).toEqual([{ name: 'deploy', change: 'added', version: 1 }]);
    expect(first.hooks).toEqual([{ name: 'tell-ops', change: 'added' }]);
    expect(first.schedules).toEqual([{ name: 'nightly-deploy', change: 'added' }]);
    expect(
      kernel.get(HooksRef).compare({ name: 'tell-ops', event_type: 'workflow.failed', script: 'return true' }),
    ).toBe('unchanged');

    const pushed = repo.push({ 'flows/deploy.yaml': flowYaml('two') }, 'rename the task\n\nbody text');
    const diff = await sync.diff();
    expect(diff.commit).toEqual({ id: pushed, author: `${AUTHOR.name} <${AUTHOR.email}>`, message: 'rename the task' });
    expect(diff.applied_commit).toBe(first.commit.id);
    expect(diff.problems).toEqual([]);
    expect(diff.flows).toHaveLength(1);
    expect(diff.flows[0]).toMatchObject({
      name: 'deploy',
      path: 'flows/deploy.yaml',
      change: 'changed',
      current_version: 1,
    });
    expect(diff.flows[0]?.unified).toContain('-  - name: one\n+  - name: two');
    expect(diff.hooks).toEqual([]);

    const second = await sync.sync('ann');
    expect(second).toMatchObject({
      previous_commit: first.commit.id,
      flows: [{ name: 'deploy', change: 'changed', version: 2 }],
    });
    const [latest] = await kernel.get(FlowsRef).versions('deploy');
    expect(latest).toMatchObject({
      version: 2,
      commit: pushed,
      author: `${AUTHOR.name} <${AUTHOR.email}>`,
      message: 'rename the task',
    });
    expect((await kernel.get(FlowsRef).get('deploy'))?.yaml).toBe(flowYaml('two'));
    expect((await sync.diff()).flows).toEqual([]);
  });

  it('status shows the applied commit, then the flows edited outside git since', async () => {
    const status = await sync.status();
    expect(status.applied).toMatchObject({ commit: run(['rev-parse', 'HEAD'], repo.work), by: 'ann' });
    expect(status.drift).toEqual([]);
    // An edit in the UI is a save by a user: a version without a commit.
    await kernel.get(FlowsRef).applyBatch(
      { save: [{ name: 'deploy', yaml: flowYaml('edited') }], remove: [] },
      {
        author: 'bob',
        message: 'hotfix in the UI',
      },
    );
    const drifted = await sync.status();
    expect(drifted.drift).toEqual([
      {
        flow: 'deploy',
        path: 'flows/deploy.yaml',
        applied_version: 2,
        current_version: 3,
        edits: [expect.objectContaining({ version: 3, author: 'bob', message: 'hotfix in the UI' })],
      },
    ]);
    expect((await sync.diff()).flows[0]).toMatchObject({ name: 'deploy', change: 'changed', current_version: 3 });
  });

  it('a sync with a broken workflow changes nothing and names the file and line', async () => {
    const before = await sync.status();
    const flowsBefore = await kernel.get(FlowsRef).count();
    repo.push(
      { 'flows/deploy.yaml': flowYaml('three'), 'flows/broken.yaml': BROKEN, 'flows/runner.yaml': null },
      'add a broken flow',
    );
    const error = await sync.sync('ann').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowValidationError);
    expect((error as Error).message).toMatch(/^flows\/broken\.yaml:6:5: /m);
    // The same problem, in diff, before any sync.
    expect((await sync.diff()).problems).toEqual([expect.stringMatching(/^flows\/broken\.yaml:6:5: /)]);
    expect((await kernel.get(FlowsRef).get('deploy'))?.yaml).toBe(flowYaml('edited'));
    expect(await kernel.get(FlowsRef).count()).toEqual(flowsBefore);
    expect(
      kernel
        .get(SchedulesRef)
        .compare({ name: 'nightly-deploy', flow: 'deploy', schedule: '0 2 * * *', timezone: 'UTC' }),
    ).toBe('unchanged');
    expect((await sync.status()).applied).toEqual(before.applied);

    // Fixed: the flow comes, and the hook and schedule the dropped manifest declared go.
    repo.push({ 'flows/broken.yaml': flowYaml('fixed') }, 'fix it');
    const fixed = await sync.sync('ann');
    expect(fixed.flows.map((f) => [f.name, f.change])).toEqual([
      ['broken', 'added'],
      ['deploy', 'changed'],
    ]);
    expect(fixed.hooks).toEqual([{ name: 'tell-ops', change: 'removed' }]);
    expect(fixed.schedules).toEqual([{ name: 'nightly-deploy', change: 'removed' }]);
  });

  it('the webhook refuses a bad signature and syncs on a signed push to the branch', async () => {
    const head = repo.push({ 'flows/deploy.yaml': flowYaml('four') }, 'webhook push');
    const body = JSON.stringify({ ref: 'refs/heads/main', after: head });
    const post = (headers: Record<string, string>, text = body) =>
      fetch(`${base}/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: text,
      });
    const forged = await post({ 'x-hub-signature-256': signature('not-the-secret', body) });
    expect(forged.status).toBe(401);
    expect((await post({})).status).toBe(401);
    // Signed, but over other bytes than those sent.
    expect((await post({ 'x-hub-signature-256': signature(SECRET, body) }, `${body} `)).status).toBe(401);
    const other = JSON.stringify({ ref: 'refs/heads/dev' });
    expect(await (await post({ 'x-hub-signature-256': signature(SECRET, other) }, other)).json()).toMatchObject({
      outcome: 'ignored',
    });
    expect((await sync.status()).applied?.commit).not.toBe(head);

    const signed = await post({ 'x-hub-signature-256': signature(SECRET, body) });
    expect(signed.status).toBe(202);
    expect(await signed.json()).toMatchObject({ outcome: 'syncing' });
    await appliedByWebhook(sync, head);
  });

  it("the webhook takes GitHub's form content type: the JSON in `payload`, signed over the form's bytes", async () => {
    const head = repo.push({ 'flows/deploy.yaml': flowYaml('five') }, 'form push');
    const form = new URLSearchParams({ payload: JSON.stringify({ ref: 'refs/heads/main', after: head }) }).toString();
    const post = (text: string, signedText = text) =>
      fetch(`${base}/webhook`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-hub-signature-256': signature(SECRET, signedText),
        },
        body: text,
      });
    // The signature covers the form as sent, not the JSON inside it.
    expect((await post(form, new URLSearchParams(form).get('payload')!)).status).toBe(401);
    const empty = await post('other=1');
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: { message: string } }).error.message).toContain('field "payload"');
    const signed = await post(form);
    expect(signed.status).toBe(202);
    expect(await signed.json()).toMatchObject({ outcome: 'syncing' });
    await appliedByWebhook(sync, head);
    // Other routes still take JSON only.
    const elsewhere = await fetch(`${base}/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'payload=%7B%7D',
    });
    expect(elsewhere.status).toBe(415);
  });

  it("a hook that does not compile and a schedule that does not parse refuse the sync, naming the manifest's lines", async () => {
    const before = await syncedRows(kernel.get(StoreRef));
    repo.push(
      {
        'flows/runner.yaml': `hooks:
  - name: bad-hook
    event: workflow.failed
    script: "return ("
schedules:
  - name: bad-cron
    flow: deploy
    schedule: "61 * * * *"
`,
      },
      'a broken manifest',
    );
    const error = await sync.sync('ann').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowValidationError);
    expect((error as Error).message).toMatch(/^flows\/runner\.yaml:2:5: hooks\[0\]: script: /m);
    expect((error as Error).message).toMatch(/^flows\/runner\.yaml:6:5: schedules\[0\]: schedule: /m);
    expect(await syncedRows(kernel.get(StoreRef))).toEqual(before);
  });

  it('a sync whose late part the database refuses changes nothing', () =>
    lateFailureChangesNothing(kernel, repo, sync));
});

describe.skipIf(!sshdAvailable())('GitOps over SSH', () => {
  let sshd: TestSshd;
  let kernel: TestKernel;
  let repo: Repo;

  beforeAll(async () => {
    sshd = await startSshd();
    repo = new Repo(join(sshd.home, 'ops.git'));
    repo.push({ 'flows/web.yaml': flowYaml('web') }, 'web over ssh');
    execFileSync('chown', ['-R', `${sshd.user}:${sshd.user}`, repo.bare]);
    writeFileSync(
      join(root, 'known_hosts'),
      `[127.0.0.1]:${sshd.port} ${readFileSync(`${sshd.hostKey}.pub`, 'utf8').trim()}\n`,
    );
    kernel = await master({}, [secretsPlugin, sshProfiles]);
  }, 60_000);
  afterAll(async () => {
    await kernel?.stop();
    await sshd?.stop();
  }, 30_000);

  it('fetches with a key from the secrets service, kept in a file only while git runs', async () => {
    const url = `ssh://${sshd.user}@127.0.0.1:${sshd.port}${repo.bare}`;
    // The key is kept by the secrets plugin (sealed in the store), under a scope of GitOps' own.
    const secrets = kernel.get(SecretsRef);
    await secrets.put('gitops:repository', 'deploy_key', readFileSync(sshd.clientKey, 'utf8'), 'ann');
    const before = readdirSync(tmpdir()).filter((f) => f.startsWith('runner-gitops-')).length;
    const sync = service(kernel, url, {
      openSession: () => openGitSession(credentials({ sshKeySecret: 'gitops:repository/deploy_key' }), { secrets }),
    });
    await sync.open();
    const result = await sync.sync('ann');
    expect(result.flows).toEqual([{ name: 'web', change: 'added', version: 1 }]);
    expect((await kernel.get(FlowsRef).versions('web'))[0]?.commit).toBe(run(['rev-parse', 'HEAD'], repo.work));
    expect(sshd.log()).toMatch(new RegExp(`Accepted publickey for ${sshd.user}`));
    expect(readdirSync(tmpdir()).filter((f) => f.startsWith('runner-gitops-')).length).toBe(before);

    // An unknown host key is refused: nothing fetched, nothing changed.
    writeFileSync(join(root, 'other_known_hosts'), '');
    const strict = service(kernel, url, {
      openSession: () =>
        openGitSession(credentials({ sshKeyFile: sshd.clientKey, knownHosts: join(root, 'other_known_hosts') }), {}),
    });
    await expect(strict.diff()).rejects.toThrow(/Host key verification failed/);
    expect(existsSync(join(root, 'other_known_hosts'))).toBe(true);
  });

  it("fetches with an SSH profile's key and pinned host key; refuses another host and an unpinned profile", async () => {
    const url = `ssh://${sshd.user}@127.0.0.1:${sshd.port}${repo.bare}`;
    const profiles = kernel.get(SshProfilesRef);
    const secrets = kernel.get(SecretsRef);
    const viaProfile = (name: string, repository = url) =>
      service(kernel, repository, {
        openSession: () => openGitSession(credentials({ sshProfile: name }), { secrets, profiles }, repository),
      });
    // Made as `runner ssh add` makes it (the service's own create; the key sealed by the secrets plugin).
    const maker = profiles as unknown as { create(name: string, input: object, actor: string): Promise<unknown> };
    await maker.create(
      'git-box',
      {
        host: '127.0.0.1',
        port: sshd.port,
        user: sshd.user,
        auth_type: 'key',
        private_key: readFileSync(sshd.clientKey, 'utf8'),
      },
      'ann',
    );
    // Not pinned yet: refused before git runs, saying how to pin it.
    await expect(viaProfile('git-box').diff()).rejects.toThrow(/has no pinned host key.*--trust-host-key/);
    (await profiles.connect('git-box', { actor: 'ann', trustHostKey: true })).close();

    const sync = viaProfile('git-box');
    await sync.open();
    // The bare repository is the SSH user's: the test (root) pushes while it owns it again.
    execFileSync('chown', ['-R', 'root:root', repo.bare]);
    repo.push({ 'flows/api.yaml': flowYaml('api') }, 'api through a profile');
    execFileSync('chown', ['-R', `${sshd.user}:${sshd.user}`, repo.bare]);
    const result = await sync.sync('ann');
    expect(result.flows).toContainEqual({ name: 'api', change: 'added', version: 1 });
    const audit = await kernel
      .get(StoreRef)
      .all<{ action: string }>('SELECT action FROM ssh_audit WHERE profile = ?', ['git-box']);
    expect(audit.map((entry) => entry.action)).toContain('key_lent');
    // The profile pins 127.0.0.1's key: a repository elsewhere is refused, naming both.
    await expect(viaProfile('git-box', `ssh://${sshd.user}@localhost:${sshd.port}${repo.bare}`).diff()).rejects.toThrow(
      'gitops.ssh_profile: profile git-box is for 127.0.0.1, but gitops.url names localhost',
    );
  });
});

describe.skipIf(!postgresReachable())('several masters on PostgreSQL', () => {
  let db: TestDatabase;
  let repo: Repo;
  let url = '';
  const kernels: TestKernel[] = [];
  /** A sync on `kernel` that applies hooks and schedules too. */
  const syncOn = (kernel: TestKernel, options: Partial<ConstructorParameters<typeof GitOps>[0]> = {}) =>
    service(kernel, url, { hooks: kernel.get(HooksRef), schedules: kernel.get(SchedulesRef), ...options });

  beforeAll(async () => {
    db = createTestDatabase('gitops');
    repo = new Repo(join(root, 'shared.git'));
    url = `file://${repo.bare}`;
    for (let i = 0; i < 2; i++)
      kernels.push(await master({ 'store.url': db.url }, [eventQueue, eventHooks, notifications, scheduler]));
  }, 60_000);
  afterAll(async () => {
    for (const kernel of kernels) await kernel.stop();
    db?.drop();
  });

  it('one runs, the other is told a sync is in progress', async () => {
    const head = repo.push({ 'flows/report.yaml': flowYaml('report') }, 'report');
    const held = gate();
    const claimed = gate();
    const first = syncOn(kernels[0]!, {
      masterId: 'master-a',
      afterClaim: async () => {
        claimed.open();
        await held.promise;
      },
    });
    const second = syncOn(kernels[1]!, { masterId: 'master-b' });
    await Promise.all([first.open(), second.open()]);
    const running = first.sync('ann');
    await claimed.promise;
    const refused = await second.sync('bob').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as Error).message).toMatch(/a GitOps sync is in progress \(started by ann on master master-a at /);
    expect((await second.status()).syncing).toMatchObject({ master: 'master-a', by: 'ann' });
    held.open();
    expect((await running).flows).toEqual([{ name: 'report', change: 'added', version: 1 }]);
    // The claim is released: the other master syncs now, with nothing left to change.
    expect(await second.sync('bob')).toMatchObject({ commit: { id: head }, flows: [] });
    // Neither the refusal nor the sync that found the commit applied is news for the audit log.
    expect(kernels[1]!.emitted.filter((event) => event.type.startsWith('gitops.'))).toEqual([]);
    expect(kernels[0]!.emitted.filter((event) => event.type === 'gitops.synced')).toHaveLength(1);
  });

  it('a sync whose claim lapsed and was taken over writes nothing, even of a newer commit', async () => {
    const taken = repo.push({ 'flows/slow.yaml': flowYaml('slow') }, 'slow');
    const held = gate();
    const claimed = gate();
    const late = syncOn(kernels[0]!, {
      masterId: 'master-a',
      afterClaim: async () => {
        claimed.open();
        await held.promise;
      },
    });
    // The other master's clock is past the claim's end: for it, the claim lapsed.
    const taker = syncOn(kernels[1]!, { masterId: 'master-b', now: () => new Date(Date.now() + CLAIM_MS + 60_000) });
    const running = late.sync('ann');
    await claimed.promise;
    expect((await taker.sync('bob')).flows).toEqual([{ name: 'slow', change: 'added', version: 1 }]);
    repo.push({ 'flows/slow.yaml': flowYaml('slower') }, 'slower');
    held.open();
    await expect(running).rejects.toThrow(/lapsed and another sync took it; nothing was applied/);
    expect(await kernels[0]!.get(FlowsRef).versions('slow')).toHaveLength(1);
    expect((await late.status()).applied).toMatchObject({ commit: taken, by: 'bob' });
  });

  it('a sync whose late part the database refuses changes nothing', () =>
    lateFailureChangesNothing(kernels[0]!, repo, syncOn(kernels[0]!)));
});
