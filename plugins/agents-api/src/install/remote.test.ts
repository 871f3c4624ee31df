// The remote scripts run here with /bin/sh (as sshd would run them), against temporary
// directories; the real SSH round trip is in test/e2e/agent-install.test.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseActivation } from './deploy.js';
import { parseAgentEnv, parseMasterAddress } from './install-command.js';
import {
  activateScript,
  chooseService,
  missingOnRemote,
  nodeIsRecentEnough,
  parseFacts,
  probeScript,
  sq,
  type InstallRecord,
  type RemoteFacts,
} from './remote.js';

const sh = (script: string) => spawnSync('/bin/sh', ['-s'], { input: script, encoding: 'utf8' });

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
});

const fit: RemoteFacts = {
  uid: 1000,
  user: 'deploy',
  home: '/home/deploy',
  os: 'Linux',
  arch: 'x86_64',
  node: '/usr/bin/node',
  nodeVersion: 'v20.19.0',
  tar: '/usr/bin/tar',
  gzip: '/usr/bin/gzip',
  pid1: 'systemd',
  systemdBooted: true,
  systemdUser: false,
  dir: '/home/deploy/.runner-agent/web-1',
  dirWritable: true,
  dirAncestor: '/home/deploy',
  freeKiB: 10_000_000,
  systemctl: '/usr/bin/systemctl',
};

describe('probe', () => {
  it('reports this host as the remote side would', () => {
    const result = sh(probeScript('web-1', undefined, undefined));
    expect(result.status).toBe(0);
    const facts = parseFacts(result.stdout);
    expect(facts.os).toBe('Linux');
    expect(facts.node).toBeTruthy();
    expect(facts.nodeVersion).toBe(execFileSync(facts.node as string, ['--version'], { encoding: 'utf8' }).trim());
    expect(facts.tar).toMatch(/tar$/);
    expect(facts.dir).toBe(
      process.getuid?.() === 0 ? '/opt/runner-agent/web-1' : `${process.env.HOME}/.runner-agent/web-1`,
    );
    expect(facts.installed).toBeUndefined();
  });

  it('expands ~/ in --remote-dir and reads an existing install.json', () => {
    const home = mkdtempSync(join(tmpdir(), 'runner-home-'));
    mkdirSync(join(home, 'agents/web-1'), { recursive: true });
    writeFileSync(join(home, 'agents/web-1/install.json'), '{"name":"web-1","version":"0.0.9"}\n');
    const result = spawnSync('/bin/sh', ['-s'], {
      input: probeScript('web-1', '~/agents/web-1', '/nonexistent/node'),
      encoding: 'utf8',
      env: { ...process.env, HOME: home },
    });
    const facts = parseFacts(result.stdout);
    expect(facts.dir).toBe(join(home, 'agents/web-1'));
    expect(facts.installed).toMatchObject({ name: 'web-1', version: '0.0.9' });
    expect(facts.node).toBe('/nonexistent/node');
    expect(facts.nodeVersion).toBeUndefined();
    expect(missingOnRemote(facts, '/nonexistent/node', 1)[0]).toBe(
      'Node.js 20.19 or newer: /nonexistent/node (--node-path) does not exist or does not run',
    );
  });
});

describe('what a host lacks', () => {
  it('says exactly what is missing', () => {
    expect(missingOnRemote(fit, undefined, 1000)).toEqual([]);
    expect(missingOnRemote({ ...fit, node: undefined, nodeVersion: undefined }, undefined, 1)[0]).toMatch(
      /^Node\.js 20\.19 or newer: no `node` on the PATH of deploy for non-interactive SSH sessions/,
    );
    expect(missingOnRemote({ ...fit, nodeVersion: 'v18.19.1' }, undefined, 1)).toEqual([
      'Node.js 20.19 or newer: found v18.19.1 at /usr/bin/node',
    ]);
    expect(missingOnRemote({ ...fit, tar: undefined, gzip: undefined }, undefined, 1)).toEqual([
      'tar (to unpack the upload)',
      'gzip (tar needs it to unpack the upload)',
    ]);
    expect(missingOnRemote({ ...fit, dirWritable: false, dirAncestor: '/opt' }, undefined, 1)[0]).toMatch(
      /^write access for deploy to \/opt \(to create \/home\/deploy\/.runner-agent\/web-1\)/,
    );
    expect(missingOnRemote({ ...fit, freeKiB: 1024 }, undefined, 50 * 1024)).toEqual([
      'free disk space: 50 MiB needed in /home/deploy, 1 MiB free',
    ]);
    expect(missingOnRemote({ ...fit, os: 'Darwin' }, undefined, 1)[0]).toMatch(/^a Linux host \(it runs Darwin/);
  });

  it('compares Node versions', () => {
    expect(nodeIsRecentEnough('v20.19.0')).toBe(true);
    expect(nodeIsRecentEnough('v22.1.0')).toBe(true);
    expect(nodeIsRecentEnough('v20.18.3')).toBe(false);
    expect(nodeIsRecentEnough('v18.20.0')).toBe(false);
    expect(nodeIsRecentEnough('garbage')).toBe(false);
  });
});

describe('service choice', () => {
  it('uses a system unit as root, a user unit when one can run, nohup otherwise, and says why', () => {
    expect(chooseService({ ...fit, uid: 0 }, 'h').mode).toBe('systemd');
    const user = chooseService({ ...fit, systemdUser: true, linger: false }, 'h');
    expect(user.mode).toBe('systemd-user');
    expect(user.note).toMatch(/loginctl enable-linger deploy/);
    const container = chooseService({ ...fit, uid: 0, systemdBooted: false, pid1: 'bash' }, 'box');
    expect(container).toEqual({
      mode: 'nohup',
      note: 'systemd is not running as PID 1 on box (PID 1 is bash), so no unit can be installed: the agent is started with nohup instead and is not restarted after a crash or a reboot',
    });
    expect(chooseService(fit, 'h').note).toMatch(/^deploy is not root and has no systemd user manager/);
  });
});

describe('parsing', () => {
  it('reads agent.env back, quotes included', () => {
    const text = `RUNNER_MASTER_ADDR=${sq('m:50053')}\nRUNNER_JOIN_TOKEN=${sq("it's $secret")}\n# comment\n`;
    expect(parseAgentEnv(text)).toEqual({ RUNNER_MASTER_ADDR: 'm:50053', RUNNER_JOIN_TOKEN: "it's $secret" });
    const script = `${text.replace(/# comment\n/, '')}printf %s "$RUNNER_JOIN_TOKEN"`;
    const viaShell = spawnSync('/bin/sh', ['-c', script], { encoding: 'utf8' });
    expect(viaShell.stdout).toBe("it's $secret");
  });

  it('parses master addresses and refuses others', () => {
    expect(parseMasterAddress('master.example:50053')).toEqual({ host: 'master.example', port: 50053 });
    expect(parseMasterAddress('[::1]:50053')).toEqual({ host: '::1', port: 50053 });
    for (const bad of ['master', 'master:0', 'master:70000', 'http://m:1', ':50053']) {
      expect(() => parseMasterAddress(bad), bad).toThrow(/is not host:port/);
    }
  });

  it('reads what the activation printed', () => {
    expect(parseActivation('stopped_old=12 \npid=345\nwarning=w1\n')).toEqual({
      pid: '345',
      stoppedOld: '12 ',
      warnings: ['w1'],
      log: '',
    });
    expect(parseActivation('failed=the agent exited right after it started\n---log---\nboom\n')).toMatchObject({
      failed: 'the agent exited right after it started',
      log: 'boom\n',
    });
  });
});

describe('activation with nohup', () => {
  /** A fake release whose runner.js runs until killed, or exits at once. */
  function release(dir: string, name: string, body: string) {
    const bin = join(dir, 'releases', `${name}.partial`, 'kernel', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'runner.js'), body);
    chmodSync(join(bin, 'runner.js'), 0o755);
  }
  const record = (releaseName: string): InstallRecord => ({
    name: 'web-1',
    version: '0.1.0',
    release: releaseName,
    service: 'nohup',
    node: process.execPath,
    master: '127.0.0.1:1',
    installed_at: 'x',
    updated_at: 'y',
  });

  it('starts the agent detached, then replaces it on the next activation and prunes old releases', () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-activate-'));
    const stay = `console.log('agent ' + process.argv.slice(2).join(' ') + ' ' + process.env.RUNNER_MASTER_ADDR); setInterval(() => {}, 1000);\n`;
    const activate = (name: string, env?: Record<string, string>) => {
      const result = sh(
        activateScript({
          name: 'web-1',
          dir,
          release: name,
          node: process.execPath,
          mode: 'nohup',
          record: record(name),
          env,
        }),
      );
      const parsed = parseActivation(result.stdout);
      if (parsed.pid) started.push(Number(parsed.pid));
      return parsed;
    };
    release(dir, 'r1', stay);
    const first = activate('r1', { RUNNER_MASTER_ADDR: '127.0.0.1:1', RUNNER_AGENT_NAME: 'web-1' });
    expect(first.failed).toBeUndefined();
    const pid1 = Number(first.pid);
    expect(() => process.kill(pid1, 0)).not.toThrow();
    expect(readlinkSync(join(dir, 'current'))).toBe('releases/r1');
    expect(readFileSync(join(dir, 'agent.env'), 'utf8')).toContain("RUNNER_MASTER_ADDR='127.0.0.1:1'");
    expect(execFileSync('stat', ['-c', '%a', join(dir, 'agent.env')], { encoding: 'utf8' }).trim()).toBe('600');
    expect(JSON.parse(readFileSync(join(dir, 'install.json'), 'utf8'))).toMatchObject({
      release: 'r1',
      service: 'nohup',
    });
    expect(readFileSync(join(dir, 'agent.log'), 'utf8')).toContain('agent agent start web-1 127.0.0.1:1');

    release(dir, 'r2', stay);
    const second = activate('r2');
    expect(second.stoppedOld?.trim()).toBe(String(pid1));
    expect(() => process.kill(pid1, 0)).toThrow();
    expect(readlinkSync(join(dir, 'current'))).toBe('releases/r2');
    // agent.env kept as it was when none is given.
    expect(readFileSync(join(dir, 'agent.env'), 'utf8')).toContain("RUNNER_MASTER_ADDR='127.0.0.1:1'");

    release(dir, 'r3', stay);
    activate('r3');
    expect(
      execFileSync('ls', [join(dir, 'releases')], { encoding: 'utf8' })
        .trim()
        .split('\n'),
    ).toEqual(['r2', 'r3']);
  });

  it('reports an agent that exits at once, with its log', () => {
    const dir = mkdtempSync(join(tmpdir(), 'runner-activate-'));
    release(dir, 'r1', `console.error('runner: cannot start: no master configured'); process.exit(2);\n`);
    const result = sh(
      activateScript({
        name: 'web-1',
        dir,
        release: 'r1',
        node: process.execPath,
        mode: 'nohup',
        record: record('r1'),
        env: {},
      }),
    );
    const parsed = parseActivation(result.stdout);
    expect(parsed.pid).toBeUndefined();
    expect(parsed.failed).toBe('the agent exited right after it started');
    expect(parsed.log).toContain('runner: cannot start: no master configured');
  });
});

describe('activation with a systemd user unit', () => {
  it('writes the unit, reloads, enables and restarts it (systemctl stubbed: no systemd here)', () => {
    const home = mkdtempSync(join(tmpdir(), 'runner-home-'));
    const dir = join(home, '.runner-agent/web-1');
    const bin = mkdtempSync(join(tmpdir(), 'runner-bin-'));
    const calls = join(bin, 'calls');
    // Plays systemd's part: `restart` starts run.sh as the unit's ExecStart would.
    writeFileSync(
      join(bin, 'systemctl'),
      [
        '#!/bin/sh',
        `echo "systemctl $*" >> ${calls}`,
        'case "$*" in',
        `  *" restart "*) setsid nohup /bin/sh ${dir}/run.sh >/dev/null 2>&1 </dev/null & ;;`,
        `  *is-active*) [ -f ${dir}/agent.pid ] && kill -0 "$(cat ${dir}/agent.pid)" 2>/dev/null ;;`,
        'esac',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const bin2 = join(dir, 'releases', 'r1.partial', 'kernel', 'bin');
    mkdirSync(bin2, { recursive: true });
    writeFileSync(join(bin2, 'runner.js'), 'setInterval(() => {}, 1000);\n');
    const result = spawnSync('/bin/sh', ['-s'], {
      input: activateScript({
        name: 'web-1',
        dir,
        release: 'r1',
        node: process.execPath,
        mode: 'systemd-user',
        record: {
          name: 'web-1',
          version: '0.1.0',
          release: 'r1',
          service: 'systemd-user',
          node: process.execPath,
          master: 'm:1',
          installed_at: 'x',
          updated_at: 'x',
        },
        env: { RUNNER_AGENT_NAME: 'web-1' },
      }),
      encoding: 'utf8',
      env: { ...process.env, HOME: home, PATH: `${bin}:${process.env.PATH}` },
    });
    const parsed = parseActivation(result.stdout);
    if (parsed.pid) started.push(Number(parsed.pid));
    expect(parsed.failed).toBeUndefined();
    expect(parsed.pid).toMatch(/^\d+$/);
    const unit = readFileSync(join(home, '.config/systemd/user/runner-agent-web-1.service'), 'utf8');
    expect(unit).toContain(`ExecStart=/bin/sh ${dir}/run.sh\n`);
    expect(unit).toContain('Restart=on-failure\n');
    expect(unit).toContain('WantedBy=default.target\n');
    const log = readFileSync(calls, 'utf8').trim().split('\n');
    expect(log.slice(0, 3)).toEqual([
      'systemctl --user daemon-reload',
      'systemctl --user enable runner-agent-web-1.service',
      'systemctl --user restart runner-agent-web-1.service',
    ]);
    expect(log.slice(3).every((l) => l === 'systemctl --user is-active --quiet runner-agent-web-1.service')).toBe(true);
  });
});
