// `runner agent install` / `update` against a real OpenSSH server on loopback: this test starts its
// own sshd (Debian's openssh-server) with a temporary host key and config, as a throwaway user with
// a temporary key pair, and runs the real `runner` CLI. Needs root (useradd) and /usr/sbin/sshd.
// The TLS master of the last tests also installs an agent through an SSH profile (the master
// connects with the key it keeps, `--ssh-profile`).
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as fetchTrusting } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, sshdAvailable, startSshd, type TestSshd } from '../support/sshd.js';
import {
  localAuth,
  localToken,
  runRunner,
  selfSignedCert,
  spawnRunner,
  tempDataDir,
  waitForOutput,
} from './helpers.js';
import { lookUpUser } from '../../plugins/engine/src/run-as.js';

const dataDir = tempDataDir('runner-install-');
let sshd: TestSshd;
let user = '';
let home = '';
let work = '';
let clientKey = '';
let hostKey = '';
let knownHosts = '';
let port = 0;
let deadPort = 0;
let uid = -1;
const masters: ReturnType<typeof spawnRunner>[] = [];
/** The TLS master the last two tests share. */
let tls: { masterData: string; masterUrl: string; cert: string; grpcPort: number; token: string } | undefined;

const authorize = (path?: string) => sshd.authorize(path);

/** The REST API of the TLS master, with its local credential, trusting its certificate. */
function masterApi({ masterData, masterUrl, cert }: NonNullable<typeof tls>) {
  const trusting = new Agent({ connect: { ca: readFileSync(cert, 'utf8') } });
  return async <T>(method: string, path: string, body?: unknown) => {
    const response = await fetchTrusting(`${masterUrl}/api/v1${path}`, {
      method,
      dispatcher: trusting,
      headers: { ...localAuth(masterData), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    // A run's log is text; every other answer JSON.
    return { status: response.status, body: (/^[[{]/.test(text) ? JSON.parse(text) : text) as T };
  };
}
const hostFingerprint = () => sshd.hostFingerprint();

function install(name: string, extra: string[] = [], env: Record<string, string> = {}) {
  return runRunner(
    [
      'agent',
      'install',
      name,
      '--ssh-host',
      '127.0.0.1',
      '--ssh-port',
      String(port),
      '--ssh-user',
      user,
      '--ssh-key',
      clientKey,
      '--known-hosts',
      knownHosts,
      '--wait',
      '20',
      ...extra,
    ],
    { env: { RUNNER_DATA_DIR: dataDir, SSH_AUTH_SOCK: '', ...env } },
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/status`, 'utf8').includes('State:\tZ');
  } catch {
    return false;
  }
}

/** Resolves once `file` contains `text` (the agent writes its log asynchronously). */
async function fileContains(file: string, text: string, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const content = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (content.includes(text)) return content;
    if (Date.now() > deadline) throw new Error(`${file} never contained "${text}"; it holds:\n${content}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Root creates the throwaway user; sshd is Debian's openssh-server (`.ci/run` installs it).
const canRun = sshdAvailable();

beforeAll(async () => {
  if (!canRun) return;
  sshd = await startSshd();
  ({ user, home, work, clientKey, hostKey, port, uid } = sshd);
  knownHosts = join(work, 'known_hosts');

  // PATHs for the Node checks: every tool but node, and a node that is too old.
  const noNode = join(work, 'no-node-bin');
  mkdirSync(noNode);
  for (const tool of readdirSync('/usr/bin'))
    if (tool !== 'node' && tool !== 'nodejs') symlinkSync(join('/usr/bin', tool), join(noNode, tool));
  const oldNode = join(work, 'old-node-bin');
  mkdirSync(oldNode);
  writeFileSync(join(oldNode, 'node'), '#!/bin/sh\necho v18.19.1\n', { mode: 0o755 });
  deadPort = await freePort();
}, 60_000);

afterAll(async () => {
  if (!canRun) return;
  for (const m of masters) if (m.exitCode === null) m.kill('SIGKILL');
  await sshd?.stop();
}, 60_000);

describe.skipIf(!canRun)('runner agent install over SSH', () => {
  it('refuses a host whose key is not known, naming the key and the way to trust it', async () => {
    const result = await install('web-1', ['--master', `127.0.0.1:${deadPort}`]);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
    expect(result.stderr).toContain(
      `runner: the host key of [127.0.0.1]:${port} is not known: it offered ssh-ed25519 key ${hostFingerprint()}, which is not in ${knownHosts}`,
    );
    expect(result.stderr).toContain('run again with --accept-new-host-key to trust and record it');
    expect(existsSync(knownHosts)).toBe(false);
    // Refused before authenticating: sshd saw no login.
    expect(sshd.log()).not.toMatch(/Accepted publickey/);
  });

  it('with --accept-new-host-key records the key, then says exactly that Node is missing', async () => {
    authorize(join(work, 'no-node-bin'));
    const result = await install('web-1', ['--master', `127.0.0.1:${deadPort}`, '--accept-new-host-key']);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
    expect(result.stdout).toContain(
      `host key ssh-ed25519 ${hostFingerprint()} of [127.0.0.1]:${port} was not known; trusted (--accept-new-host-key) and recorded in ${knownHosts}`,
    );
    expect(result.stderr).toContain(
      `runner: 127.0.0.1 lacks what the agent needs; nothing was changed there. Missing: Node.js 20.19 or newer: no \`node\` on the PATH of ${user} for non-interactive SSH sessions`,
    );
    // OpenSSH's own tools find the recorded (hashed) entry.
    const found = execFileSync('ssh-keygen', ['-F', `[127.0.0.1]:${port}`, '-f', knownHosts], { encoding: 'utf8' });
    expect(found).toContain(readFileSync(`${hostKey}.pub`, 'utf8').split(' ')[1]);
    expect(readFileSync(knownHosts, 'utf8')).not.toContain('127.0.0.1');
    expect(existsSync(join(home, '.runner-agent'))).toBe(false);
  });

  it('names the Node version it found when it is too old', async () => {
    authorize(`${join(work, 'old-node-bin')}:/usr/bin:/bin`);
    const result = await install('web-1', ['--master', `127.0.0.1:${deadPort}`]);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
    expect(result.stdout).toContain(`host key ssh-ed25519 ${hostFingerprint()} matches ${knownHosts}:1`);
    expect(result.stderr).toContain(
      `Missing: Node.js 20.19 or newer: found v18.19.1 at ${join(work, 'old-node-bin/node')}`,
    );
  });

  it('refuses a changed host key loudly, even with --accept-new-host-key', async () => {
    const other = join(work, 'other_host_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const stale = join(work, 'stale_known_hosts');
    const staleText = `[127.0.0.1]:${port} ${readFileSync(`${other}.pub`, 'utf8').split(' ').slice(0, 2).join(' ')}\n`;
    writeFileSync(stale, staleText);
    for (const extra of [[], ['--accept-new-host-key']]) {
      const result = await install('web-1', ['--master', `127.0.0.1:${deadPort}`, '--known-hosts', stale, ...extra]);
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(
          `^runner: HOST KEY MISMATCH for \\[127\\.0\\.0\\.1\\]:${port}: it offered ssh-ed25519 key ${hostFingerprint().replace(/[+/]/g, '\\$&')}`,
        ),
      );
      expect(result.stderr).toContain(`at ${stale}:1`);
      expect(result.stderr).toContain('man in the middle');
      expect(result.stderr).toContain('--accept-new-host-key does not override this');
    }
    expect(readFileSync(stale, 'utf8')).toBe(staleText);
  });

  it('uploads, starts the agent (nohup without systemd) and says the master cannot be reached', async () => {
    authorize();
    const result = await install('web-1', ['--master', `127.0.0.1:${deadPort}`, '--token', "t0k'en"]);
    expect(result.stderr).not.toMatch(/^runner:/m);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const dir = join(home, '.runner-agent/web-1');
    expect(result.stdout).toMatch(
      new RegExp(`^uploading runner \\d+\\.\\d+\\.\\d+ \\(\\d+ files, [\\d.]+ MiB\\) to ${dir}/releases/`, 'm'),
    );
    expect(result.stderr).toMatch(
      new RegExp(
        `^warning: (systemd is not running as PID 1 on 127\\.0\\.0\\.1 \\(PID 1 is .+\\)|${user} is not root and has no systemd user manager).* started with nohup instead`,
        'm',
      ),
    );
    const [, pid] = /^started agent web-1 on 127\.0\.0\.1 \(pid (\d+), nohup\); log: (.+)$/m.exec(result.stdout) ?? [];
    expect(pid).toBeDefined();
    expect(result.stderr).toContain(
      `warning: 127.0.0.1 cannot reach the master at 127.0.0.1:${deadPort} (ECONNREFUSED): the agent keeps retrying with backoff.`,
    );
    expect(result.stderr).toContain(
      `warning: not checked: whether agent web-1 registered with the master, because no master REST API is known here (--master-url not given; master.url not set (config file or RUNNER_MASTER_URL); ${dataDir}/master.json does not exist`,
    );

    // The agent runs as the SSH user, from the release, with what install wrote.
    expect(alive(Number(pid))).toBe(true);
    expect(readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(new RegExp(`^Uid:\\s+${uid}\\b`, 'm'));
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toEqual(
      expect.arrayContaining([`${dir}/current/kernel/bin/runner.js`, 'agent', 'start', 'web-1']),
    );
    expect(readlinkSync(join(dir, 'current'))).toMatch(/^releases\/\d+\.\d+\.\d+-\d{8}T\d{9}Z$/);
    expect(statSync(join(dir, 'agent.env')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'agent.env'), 'utf8')).toContain(`RUNNER_JOIN_TOKEN='t0k'\\''en'`);
    expect(JSON.parse(readFileSync(join(dir, 'install.json'), 'utf8'))).toMatchObject({
      name: 'web-1',
      service: 'nohup',
      master: `127.0.0.1:${deadPort}`,
    });
    await fileContains(join(dir, 'agent.log'), `connecting to master 127.0.0.1:${deadPort}`);
    expect(JSON.parse(readFileSync(join(dataDir, 'agent-installs/web-1.json'), 'utf8'))).toMatchObject({
      name: 'web-1',
      ssh: { host: '127.0.0.1', port, user, key: clientKey },
      known_hosts: knownHosts,
      remote_dir: dir,
      service: 'nohup',
    });

    const again = await install('web-1', ['--master', `127.0.0.1:${deadPort}`]);
    expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(1);
    expect(again.stderr).toMatch(
      /^runner: agent web-1 is already installed on 127\.0\.0\.1 in .*: use `runner agent update web-1`, or --force/m,
    );
  }, 90_000);

  it('update pushes a new release from the recorded install and restarts the agent', async () => {
    const dir = join(home, '.runner-agent/web-1');
    const before = readlinkSync(join(dir, 'current'));
    const oldPid = Number(readFileSync(join(dir, 'agent.pid'), 'utf8').trim());
    const result = await runRunner(['agent', 'update', 'web-1', '--wait', '5'], {
      env: { RUNNER_DATA_DIR: dataDir, SSH_AUTH_SOCK: '' },
    });
    expect(result.stderr).not.toMatch(/^runner:/m);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain('service: nohup (as installed)');
    expect(result.stdout).toContain(`stopped the previous agent process (pid ${oldPid}`);
    const [, pid] = /^restarted agent web-1 on 127\.0\.0\.1 \(pid (\d+), nohup\)/m.exec(result.stdout) ?? [];
    expect(Number(pid)).not.toBe(oldPid);
    expect(alive(oldPid)).toBe(false);
    expect(alive(Number(pid))).toBe(true);
    const after = readlinkSync(join(dir, 'current'));
    expect(after).not.toBe(before);
    expect(readdirSync(join(dir, 'releases')).sort()).toEqual(
      [before, after].map((r) => r.replace('releases/', '')).sort(),
    );
    // The token given at install survives an update that does not change it.
    expect(readFileSync(join(dir, 'agent.env'), 'utf8')).toContain(`RUNNER_JOIN_TOKEN='t0k'\\''en'`);

    const missing = await runRunner(['agent', 'update', 'nope'], { env: { RUNNER_DATA_DIR: dataDir } });
    expect(missing.code, `${missing.stdout}\n${missing.stderr}`).toBe(2);
    expect(missing.stderr).toContain(
      'runner: --ssh-host is required (no earlier `runner agent install nope` from this machine is recorded',
    );
  }, 90_000);

  it('registers with a real TLS master, which then lists, measures and stops it', async () => {
    const masterData = tempDataDir('runner-install-master-');
    const grpcPort = await freePort();
    const token = `rjt_${randomBytes(16).toString('hex')}`;
    const { cert, key } = selfSignedCert(masterData, 'master');
    const master = spawnRunner(
      [
        'server',
        '--http-port',
        '0',
        '--bind-address',
        '127.0.0.1',
        '--port',
        String(grpcPort),
        '--tls-cert',
        cert,
        '--tls-key',
        key,
      ],
      {
        env: { RUNNER_DATA_DIR: masterData, RUNNER_JOIN_TOKEN: token, RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1' },
      },
    );
    masters.push(master);
    const [, http] = await waitForOutput(master, /REST API listening on (127\.0\.0\.1:\d+)/);
    // --tls-cert serves the REST API over HTTPS too: the install command reaches it trusting the cert.
    const masterUrl = `https://${http}`;
    tls = { masterData, masterUrl, cert, grpcPort, token };

    const result = await install(
      'db-1',
      [
        '--master',
        `127.0.0.1:${grpcPort}`,
        '--token',
        token,
        '--master-tls-cert',
        cert,
        '--master-url',
        masterUrl,
        // Known already when the tests before ran; this one may run alone.
        '--accept-new-host-key',
      ],
      { RUNNER_TOKEN: localToken(masterData), RUNNER_CA: cert },
    );
    expect(result.stderr).not.toMatch(/^runner:/m);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain(`waiting up to 20 s for db-1 to register with the master at ${masterUrl} ...`);
    expect(result.stdout).toMatch(
      /^agent db-1 registered with the master: status (online|warning), address 127\.0\.0\.1:\d+/m,
    );
    const [, pid] = /^started agent db-1 on 127\.0\.0\.1 \(pid (\d+)/m.exec(result.stdout) ?? [];
    // The agent trusts the master's certificate, copied beside its agent.env.
    const installed = join(home, '.runner-agent/db-1');
    expect(readFileSync(join(installed, 'master-ca.pem'), 'utf8')).toBe(readFileSync(cert, 'utf8'));
    expect(readFileSync(join(installed, 'agent.env'), 'utf8')).toContain(
      `RUNNER_AGENT_MASTER_TLS_CERT='${installed}/master-ca.pem'`,
    );

    const env = { RUNNER_DATA_DIR: masterData };
    const list = await runRunner(['agent', 'list', '--output', 'json'], { env });
    expect(list.code, `${list.stdout}\n${list.stderr}`).toBe(0);
    expect(JSON.parse(list.stdout).agents.map((a: { name: string }) => a.name)).toContain('db-1');
    const metrics = await runRunner(['agent', 'metrics', 'db-1', '--output', 'json'], { env });
    expect(metrics.code, `${metrics.stdout}\n${metrics.stderr}`).toBe(0);
    expect(JSON.parse(metrics.stdout).cpu.cores).toBeGreaterThan(0);
    const modules = await runRunner(['agent', 'modules', 'db-1'], { env });
    expect(modules.stdout.split('\n')).toContain('exec');

    // --watch off a terminal: one line per sample until Ctrl-C, then exit 0.
    const watch = spawnRunner(['agent', 'metrics', 'db-1', '--watch', '--interval', '0.2'], { env });
    await waitForOutput(watch, /Z cpu [^\n]*\n[^]*Z cpu [^\n]*\n/);
    const exited = new Promise<number | null>((resolve) => watch.once('exit', (code) => resolve(code)));
    watch.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(watch.output.stdout).toMatch(/^\S+Z cpu [\d.]+% load /m);

    const stop = await runRunner(['agent', 'stop', 'db-1'], { env });
    expect(stop.code, `${stop.stdout}\n${stop.stderr}`).toBe(0);
    expect(stop.stdout).toBe('agent db-1 is stopping\n');
    for (let i = 0; i < 100 && alive(Number(pid)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(Number(pid))).toBe(false);
  }, 90_000);

  it('installs through an SSH profile: the master connects with the key it keeps, only to a pinned host key, audited', async () => {
    if (!tls) throw new Error('needs the TLS master of the test before');
    const { masterData, masterUrl, cert, grpcPort, token } = tls;
    const api = masterApi(tls);
    // The key is stored encrypted on the master; this CLI has no SSH credentials at all.
    const privateKey = readFileSync(clientKey, 'utf8');
    const profile = { name: 'box', host: '127.0.0.1', port, user, auth_type: 'key', private_key: privateKey };
    expect((await api('POST', '/ssh', profile)).status).toBe(201);
    const viaProfile = () =>
      runRunner(
        [
          'agent',
          'install',
          'db-2',
          '--ssh-profile',
          'box',
          '--master',
          `127.0.0.1:${grpcPort}`,
          '--master-tls-cert',
          cert,
        ],
        {
          env: {
            RUNNER_DATA_DIR: tempDataDir('runner-install-cli-'),
            RUNNER_MASTER_URL: masterUrl,
            RUNNER_TOKEN: localToken(masterData),
            RUNNER_CA: cert,
            SSH_AUTH_SOCK: '',
          },
        },
      );

    // No pinned host key: refused before anything ran on the host, in the profile's words.
    const refused = await viaProfile();
    expect(refused.code, `${refused.stdout}\n${refused.stderr}`).toBe(1);
    expect(refused.stderr).toContain(
      `runner: SSH profile box has no pinned host key: 127.0.0.1:${port} offered ssh-ed25519 ${hostFingerprint()}`,
    );

    expect((await api('POST', '/ssh/box/test', { trust_host_key: true })).status).toBe(200);
    const result = await viaProfile();
    expect(result.stderr).not.toMatch(/^runner:/m);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain(
      `host key ssh-ed25519 ${hostFingerprint()} of 127.0.0.1 matches the one pinned in SSH profile box`,
    );
    const [, pid] = /^started agent db-2 on 127\.0\.0\.1 \(pid (\d+), nohup\)/m.exec(result.stdout) ?? [];
    expect(alive(Number(pid))).toBe(true);
    expect(result.stdout).toMatch(/^agent db-2 registered with the master: status (online|warning)/m);
    // The token was the master's own (no --token); neither it nor the key was ever printed.
    expect(readFileSync(join(home, '.runner-agent/db-2/agent.env'), 'utf8')).toContain(`RUNNER_JOIN_TOKEN='${token}'`);
    const keyBody = privateKey.split('\n')[1];
    for (const text of [result.stdout, result.stderr]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(keyBody);
    }

    const { body: audit } = await api<{ entries: { actor: string; action: string; detail: string }[] }>(
      'GET',
      '/ssh/box/audit?limit=50',
    );
    const install = audit.entries.filter((e) => e.actor.startsWith('agent-install:db-2/')).reverse();
    expect(
      install.map((e) => (e.action === 'command_executed' ? e.detail.split(' ').slice(0, 3).join(' ') : e.action)),
    ).toEqual([
      'connection_failed',
      'connection_established',
      '/bin/sh -s probe',
      "/bin/sh -c 'mkdir",
      '/bin/sh -s activate',
      '/bin/sh -s reach-master',
      'connection_closed',
    ]);
    const { body: records } = await api<{ records: { action: string; detail?: string; result: string }[] }>(
      'GET',
      '/audit?event=api.call&limit=20',
    );
    const calls = records.records.filter((r) => r.action === 'POST /api/v1/agents/:name/install');
    expect(calls.map((r) => [r.result, r.detail])).toEqual([
      ['success', `install of agent db-2 through SSH profile box (127.0.0.1): started, pid ${pid}`],
      ['failure', 'install of agent db-2 through SSH profile box (127.0.0.1)'],
    ]);
  }, 90_000);
  it("a workflow's task in the root master's local executor uses the profile through the master: ssh.exec, upload, download", async () => {
    if (!tls) throw new Error('needs the TLS master and the pinned profile box of the tests before');
    const api = masterApi(tls);
    const executor = lookUpUser('runner-exec');
    if (!executor) throw new Error('the root master created no runner-exec');
    // Files of the executor's working directory (its user's home); unique, as other masters share it.
    const tag = randomBytes(4).toString('hex');
    const [up, down, secret, remote] = [
      `ssh-up-${tag}.bin`,
      `ssh-down-${tag}.bin`,
      `ssh-root-${tag}`,
      `${home}/run-${tag}.bin`,
    ];
    // Root's file in the executor's directory: the master could read it, the executor's user cannot.
    writeFileSync(join(executor.home, secret), 'root only\n', { mode: 0o600 });
    const content = [
      'version: "1.0"',
      'tasks:',
      '  - name: copy',
      '    exec:',
      '      script: |',
      `        local f = assert(io.open("${up}", "wb"))`,
      `        f:write(string.rep("runner ssh ${tag} ", 40000))`,
      '        f:close()',
      `        local sent = ssh.upload("box", "${up}", "${remote}", { mode = "0640" })`,
      `        local sum = ssh.exec("box", "sha256sum ${remote}")`,
      `        local got = ssh.download("box", "${remote}", "${down}")`,
      `        local ok, err = pcall(ssh.upload, "box", "${secret}", "${remote}.root")`,
      '        state.set("uploaded", sent.bytes)',
      '        return true, "", { sent = sent.bytes, got = got.bytes, remote_sum = sum.stdout, code = sum.code,',
      '          refused = tostring(err), user = exec.run("id -un").stdout, stored = state.get("uploaded") }',
    ].join('\n');
    const run = async () => {
      const started = await api<{ id: string }>('POST', '/workflows/run', { workflow_name: 'ssh-copy', content });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      for (;;) {
        const { body } = await api<{
          id: string;
          status: string;
          tasks: { name: string; status: string; message?: string; outputs?: Record<string, unknown> }[];
        }>('GET', `/executions/${started.body.id}`);
        if (body.status !== 'running' && body.status !== 'pending') return body;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const audit = async (runId: string) =>
      (
        await api<{ entries: { actor: string; action: string; detail: string; result?: number }[] }>(
          'GET',
          '/ssh/box/audit?limit=100',
        )
      ).body.entries
        .filter((e) => e.actor === `workflow:ssh-copy/${runId}/copy`)
        .reverse();

    // Not open to workflows: refused by the master before it connects, saying how to allow it.
    const refused = await run();
    expect(refused.status).toBe('failed');
    expect(refused.tasks[0].message).toContain(
      'ssh.upload: SSH profile box is not open to workflows (an admin allows it: runner ssh update box ... --workflows)',
    );
    expect(await audit(refused.id)).toEqual([]);

    const body = { host: '127.0.0.1', port, user, auth_type: 'key', workflows: true };
    expect((await api('PUT', '/ssh/box', body)).status).toBe(200);
    const done = await run();
    expect(done.status, JSON.stringify(done.tasks)).toBe('succeeded');
    const outputs = done.tasks[0].outputs as Record<string, unknown>;
    const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    const bytes = 40000 * `runner ssh ${tag} `.length;
    // Run by the executor's user; the bytes are equal at every hop.
    expect(outputs).toMatchObject({ user: 'runner-exec\n', sent: bytes, got: bytes, code: 0, stored: bytes });
    expect(outputs.remote_sum).toBe(`${sha(join(executor.home, up))}  ${remote}\n`);
    expect(sha(join(executor.home, down))).toBe(sha(join(executor.home, up)));
    expect(statSync(remote).mode & 0o777).toBe(0o640);
    // Written by the executor as its user, and never able to read what its user may not.
    expect(statSync(join(executor.home, down))).toMatchObject({ uid: executor.uid, mode: 0o100600 });
    expect(outputs.refused).toContain(secret);
    expect(outputs.refused).toMatch(/EACCES|permission denied/i);
    expect(existsSync(`${remote}.root`)).toBe(false);
    const actions = (await audit(done.id)).map((e) => [e.action, e.result ?? null]);
    expect(actions).toEqual(
      expect.arrayContaining([
        ['file_uploaded', bytes],
        ['command_executed', 0],
        ['file_downloaded', bytes],
      ]),
    );
    expect(actions.filter(([action]) => action === 'connection_established')).toHaveLength(3);
    // The profile's key went nowhere near the run.
    const log = await api<string>('GET', `/executions/${done.id}/log`);
    const keyBody = readFileSync(clientKey, 'utf8').split('\n')[1];
    expect(JSON.stringify([done, log.body])).not.toContain(keyBody);
    for (const file of [up, down, secret]) rmSync(join(executor.home, file), { force: true });
  }, 60_000);
});
