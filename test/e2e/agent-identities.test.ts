// Agent identities (issue 9 item 6) as an operator meets them: a real `runner server` and real
// `runner agent start` processes on loopback. The join token enrols an agent once; from then on
// it connects with its own credential, which survives a rotated join token and a master restart,
// keeps its name from other agents, and dies with `runner agent revoke`.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAST_AGENTS,
  fetchAs,
  finished,
  runRunner,
  spawnRunner,
  stopAll,
  tempDataDir,
  type Finished,
  waitForOutput,
} from './helpers.js';

type Child = ReturnType<typeof spawnRunner>;

// Reconnection attempts stay under 0.3 s apart, so an agent finds a restarted master quickly, and
// no circuit breaker pauses them while the master restarts on a loaded machine.
const FAST = { ...FAST_AGENTS, RUNNER_AGENT_RECONNECT_MAX_DELAY: '0.3', RUNNER_AGENT_CIRCUIT_BREAKER_FAILURES: '0' };

const children: Child[] = [];
afterAll(() => {
  stopAll(children);
});

const masterDir = tempDataDir('runner-e2e-ident-master-');
const agentDir = tempDataDir('runner-e2e-ident-agent-');
const credentialFile = join(agentDir, 'agent.credential');
let master: Child;
let grpcPort = 0;
let base = '';
let agent: Child;
const api = fetchAs(masterDir);

async function startMaster(port = 0): Promise<void> {
  master = spawnRunner(['server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', String(port)], {
    env: { RUNNER_DATA_DIR: masterDir, ...FAST },
  });
  children.push(master);
  grpcPort = Number((await waitForOutput(master, /gRPC listening on 127\.0\.0\.1:(\d+)/))[1]);
  base = `http://${(await waitForOutput(master, /REST API listening on (127\.0\.0\.1:\d+)/))[1]}/api/v1`;
}

const joinToken = () => readFileSync(join(masterDir, 'agent-token'), 'utf8').trim();

function spawnAgent(name: string, dataDir: string, token = joinToken()): Child {
  const child = spawnRunner(['agent', 'start', name, '--master', `127.0.0.1:${grpcPort}`], {
    env: { RUNNER_DATA_DIR: dataDir, RUNNER_JOIN_TOKEN: token, ...FAST },
  });
  children.push(child);
  return child;
}

/** `runner ...` on the master's host: the CLI authenticates with the local credential. */
const cli = (args: string[]): Promise<Finished> => runRunner(args, { env: { RUNNER_DATA_DIR: masterDir } });

/** Every byte the master wrote to its data directory (store, logs), as text. */
function masterFiles(): string {
  return (readdirSync(masterDir, { recursive: true }) as string[])
    .map((file) => join(masterDir, file))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, 'latin1'))
    .join('\n');
}

beforeAll(async () => {
  await startMaster();
  agent = spawnAgent('ident-1', agentDir);
  await waitForOutput(agent, /enrolled with master .*agent\.credential \(mode 0600\)/);
}, 30_000);

describe('agent identities', () => {
  it('the first registration enrols the agent: its credential is a 0600 file in a 0700 directory, never shown', async () => {
    expect(statSync(credentialFile).mode & 0o777).toBe(0o600);
    expect(statSync(agentDir).mode & 0o777).toBe(0o700);
    const credential = readFileSync(credentialFile, 'utf8').trim();
    expect(credential).toMatch(/^rac_[A-Za-z0-9_-]{43}$/);
    await waitForOutput(master, /agent ident-1 connected from 127\.0\.0\.1:\d+ and was enrolled/);

    const shown = (await (await api(`${base}/agents/ident-1`)).json()) as Record<string, unknown>;
    // online, or warning on a busy test host: connected either way.
    expect(shown).toMatchObject({
      name: 'ident-1',
      status: expect.stringMatching(/^(online|warning)$/),
      revoked_at: null,
    });
    expect(Date.parse(String(shown.enrolled_at))).toBeGreaterThan(Date.now() - 60_000);
    const listed = await cli(['agent', 'list']);
    expect(listed.stdout).toMatch(/ENROLLED\n(.*\n)*ident-1\s+(online|warning)\s.*\d{4}-\d\d-\d\d$/m);

    // A task that reads the credential file and returns it: the agent masks it before it leaves.
    const run = await api(`${base}/workflows/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        workflow_name: 'leak',
        content: `version: "1.0"\ntasks:\n  - name: cat\n    delegate_to: ident-1\n    exec:\n      script: |\n        local r = exec.run("cat ${credentialFile}")\n        log.info("read " .. r.stdout)\n        return true, r.stdout, { out = r.stdout }\n`,
      }),
    });
    const { id } = (await run.json()) as { id: string };
    let record = '';
    for (let i = 0; i < 200 && !/"status":"(succeeded|failed)"/.test(record); i++) {
      await new Promise((r) => setTimeout(r, 50));
      record = await (await api(`${base}/executions/${id}`)).text();
    }
    expect(record).toMatch(/"status":"succeeded"/);
    expect(record).toContain('***');
    const everything = [listed.stdout, JSON.stringify(shown), record, master.output.stdout, master.output.stderr];
    for (const text of [...everything, agent.output.stdout, agent.output.stderr, masterFiles()])
      expect(text).not.toContain(credential);
  }, 30_000);

  it("a second agent with the join token cannot take the live agent's name", async () => {
    const intruder = spawnAgent('ident-1', tempDataDir('runner-e2e-ident-intruder-'));
    const done = await finished(intruder);
    expect(done.code).not.toBe(0);
    expect(done.stderr).toMatch(
      /runner: master 127\.0\.0\.1:\d+ refused agent ident-1: agent ident-1 is connected \(from 127\.0\.0\.1:\d+\) with its own credential; the join token cannot take its name/,
    );
    await waitForOutput(master, /refused agent ident-1 from 127\.0\.0\.1:\d+: agent ident-1 is connected/);
    expect(agent.exitCode).toBeNull();
    expect(((await (await api(`${base}/agents/ident-1`)).json()) as { status: string }).status).not.toBe('offline');
  }, 20_000);

  it('after the join token is rotated and the master restarted, the agent reconnects with its credential', async () => {
    const oldToken = joinToken();
    const rotated = await cli(['agent', 'token', 'create', '--force']);
    expect(rotated.code).toBe(0);
    expect(rotated.stdout.trim()).not.toBe(oldToken);
    master.kill('SIGTERM');
    expect((await finished(master)).code).toBe(0);
    await waitForOutput(agent, /lost the master/);
    const before = agent.output.stdout.length + agent.output.stderr.length;
    await startMaster(grpcPort);
    await waitForOutput(master, /agent ident-1 connected from 127\.0\.0\.1:\d+ with its credential/);
    expect(agent.output.stdout.length + agent.output.stderr.length).toBeGreaterThan(before);
    expect(agent.exitCode).toBeNull();
    // The agent still has only the old join token: a new agent with it is refused.
    const stale = finished(spawnAgent('ident-new', tempDataDir('runner-e2e-ident-stale-'), oldToken));
    expect((await stale).stderr).toMatch(/refused agent ident-new: wrong join token/);
  }, 40_000);

  it('revoke needs agent:manage, closes the session with no reconnect, and the agent cannot come back until removed', async () => {
    const operator = (await cli(['auth', 'token', 'create', '--name', 'ops', '--role', 'operator'])).stdout.trim();
    const refused = await fetch(`${base}/agents/ident-1/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator}` },
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('agent:manage');

    const ending = finished(agent); // before the revoke: the agent may be gone before the CLI returns
    const revoked = await cli(['agent', 'revoke', 'ident-1']);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/^agent ident-1: credential revoked at \d{4}-.*cannot reconnect/);
    const ended = await ending;
    expect(ended.stderr).toMatch(/asked it not to reconnect: the credential of agent ident-1 was revoked/);
    const shown = (await (await api(`${base}/agents/ident-1`)).json()) as Record<string, unknown>;
    expect(shown).toMatchObject({ status: 'offline', revoked_at: expect.any(String) });
    expect((await cli(['agent', 'get', 'ident-1'])).stdout).toMatch(/^enrolled +revoked \d{4}-/m);

    // The same agent (its credential, and the new join token) is refused, with the way out.
    const back = await finished(spawnAgent('ident-1', agentDir));
    expect(back.code).not.toBe(0);
    expect(back.stderr).toMatch(
      /refused agent ident-1: the credential of agent ident-1 was revoked .*runner agent remove ident-1/,
    );

    const audit = await cli(['audit', 'list', '--output', 'json', '--limit', '1000']);
    const actions = (JSON.parse(audit.stdout) as { records: { action: string; result: string; user: string }[] })
      .records;
    expect(actions).toContainEqual(
      expect.objectContaining({ action: 'POST /api/v1/agents/:name/revoke', result: 'success', user: 'local' }),
    );
    expect(actions).toContainEqual(
      expect.objectContaining({ action: 'POST /api/v1/agents/:name/revoke', result: 'failure', user: 'ops' }),
    );

    // remove frees the name: the agent enrols again and gets a new credential.
    const old = readFileSync(credentialFile, 'utf8');
    expect((await cli(['agent', 'remove', 'ident-1'])).code).toBe(0);
    agent = spawnAgent('ident-1', agentDir);
    await waitForOutput(agent, /enrolled with master/);
    expect(readFileSync(credentialFile, 'utf8')).not.toBe(old);
  }, 40_000);
});
