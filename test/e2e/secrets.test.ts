// A stack's secrets never leave a master or an agent in any readable form: one real `runner
// server` at debug level and one real `runner agent`, over gRPC with TLS (how secrets reach agents
// on other hosts) or, in the PostgreSQL pass, plaintext on loopback (which the master allows: the
// values never leave the host). Three secrets are added (one through the CLI from
// stdin), then a workflow of the production stack prints them raw, inside strings, base64- and
// URL-encoded, through log, print, exec.run("echo ..."), templates, outputs, an error and a task
// delegated to the agent. Then every way out is searched: every API answer fetched, every
// WebSocket message, the run's log stream (SSE) and the agent's, both processes' terminals and
// every file of both data directories (runner.log, the store), and an offline backup. All of it
// twice: the master on its embedded store with a TLS agent, then on PostgreSQL (whose dump is
// searched too) with a plaintext one.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/postgres.js';
import {
  localAuth,
  localToken,
  runRunner,
  selfSignedCert,
  spawnRunner,
  stopAll,
  tempDataDir,
  waitForOutput,
} from './helpers.js';

type Child = ReturnType<typeof spawnRunner>;

const hex = () => randomBytes(6).toString('hex');
// '/', '+' and ' ' make the URL-encoded forms differ from the values.
const SECRETS = { db_password: `db/${hex()}+pw`, api_token: `tok ${hex()}/x`, ssh_key: `key+${hex()}=k` };
const VALUES = Object.values(SECRETS);
const MASK = '***';
const FAST = {
  RUNNER_AGENT_HEARTBEAT_INTERVAL: '0.2',
  RUNNER_GRPC_BIND_ADDRESS: '127.0.0.1',
  RUNNER_AGENT_RECONNECT_INITIAL_DELAY: '0.1',
};

/** Every spelling searched for: raw, URL-encoded, base64 (of the value and of `value\n`, what `echo | base64` prints). */
const spellings = (value: string) => [
  value,
  encodeURIComponent(value),
  Buffer.from(value).toString('base64'),
  Buffer.from(`${value}\n`).toString('base64').slice(0, -4),
];
const leaksIn = (text: string) => VALUES.flatMap(spellings).filter((form) => text.includes(form));

const children: Child[] = [];
afterAll(() => stopAll(children));

function everyFile(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? everyFile(path) : [path];
  });
}

// Lua: URL-encoding; base64 comes from the shell (exec.run), as a script would do it.
const URL_ENCODE = `local function url(s) return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end)) end`;
const WORKFLOW = `version: "1.0"
stack: prod
vars:
  region: default
tasks:
  - name: local
    exec:
      script: |
        ${URL_ENCODE}
        log.debug("debug raw " .. secrets.db_password)
        log.info("in a string [" .. secrets.api_token .. "] and templated {{ secrets.ssh_key }}")
        print("printed " .. secrets.db_password .. " url " .. url(secrets.api_token))
        local echoed = exec.run("echo " .. secrets.db_password)
        local b64 = exec.run("echo '" .. secrets.api_token .. "' | base64")
        log.info("base64 " .. b64.stdout)
        return true, "region " .. vars.region .. "/" .. stack.vars.region .. " " .. secrets.ssh_key,
          { echoed = echoed.stdout, b64 = b64.stdout, url = url(secrets.db_password), nested = { v = secrets.api_token } }
  - name: fails
    depends_on: [local]
    ignore_errors: true
    exec:
      script: |
        error("failed holding " .. secrets.db_password)
  - name: remote
    depends_on: [local]
    delegate_to: a1
    exec:
      script: |
        ${URL_ENCODE}
        log.info("agent logs " .. secrets.api_token .. " url " .. url(secrets.ssh_key))
        local r = exec.run("echo " .. secrets.ssh_key)
        return true, "agent says " .. secrets.db_password, { out = r.stdout }
`;

// One pass each: the transport does not depend on the store, and a third master would cost 40 s.
for (const [backend, grpc] of [
  ['embedded', 'TLS'],
  ['postgres', 'plaintext'],
] as const)
  describe.skipIf(backend === 'postgres' && !postgresReachable())(
    `the secrets of a stack run (${backend} store, ${grpc} agent)`,
    () => {
      let master: Child;
      let database: TestDatabase | undefined;
      /** The master's store: its data directory's, or a database of this file's on PostgreSQL. */
      let storeEnv: Record<string, string> = {};
      // The master stopped at the end of beforeAll; its database goes whatever the tests found.
      afterAll(() => database?.drop());
      let agent: Child;
      let masterDir: string;
      let agentDir: string;
      let base: string;
      const answers: string[] = [];
      const wsMessages: string[] = [];
      let agentSse = '';
      let runSse = '';
      let run: {
        status: string;
        stack?: string;
        tasks: { name: string; status: string; message?: string; outputs?: Record<string, unknown> }[];
      };
      const refusals: Record<string, { status: number; message: string }> = {};

      const api = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${base}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...localAuth(masterDir) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        answers.push(text);
        return { status: response.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
      };

      beforeAll(async () => {
        if (backend === 'postgres') {
          database = createTestDatabase('secrets_e2e');
          storeEnv = { RUNNER_STORE_URL: database.url };
        }
        masterDir = tempDataDir('runner-e2e-secrets-master-');
        agentDir = tempDataDir('runner-e2e-secrets-agent-');
        // TLS on the gRPC port only (grpc.tls_*): the REST API the test reads stays plain HTTP.
        const pair = grpc === 'TLS' ? selfSignedCert(masterDir, 'grpc') : undefined;
        master = spawnRunner(['--debug', 'server', '--http-port', '0', '--bind-address', '127.0.0.1', '--port', '0'], {
          env: {
            RUNNER_DATA_DIR: masterDir,
            ...storeEnv,
            ...FAST,
            ...(pair ? { RUNNER_GRPC_TLS_CERT: pair.cert, RUNNER_GRPC_TLS_KEY: pair.key } : {}),
          },
        });
        children.push(master);
        const [, grpcPort, transport] = await waitForOutput(
          master,
          /gRPC listening on 127\.0\.0\.1:(\d+) \((TLS|plaintext)/,
        );
        expect(transport).toBe(grpc);
        const [, http] = await waitForOutput(master, /REST API listening on (127\.0\.0\.1:\d+)/);
        base = `http://${http}/api/v1`;
        const token = readFileSync(join(masterDir, 'agent-token'), 'utf8').trim();
        agent = spawnRunner(['--debug', 'agent', 'start', 'a1', '--master', `127.0.0.1:${grpcPort}`], {
          env: {
            RUNNER_DATA_DIR: agentDir,
            RUNNER_JOIN_TOKEN: token,
            ...FAST,
            ...(pair ? { RUNNER_AGENT_MASTER_TLS_CERT: pair.cert } : {}),
          },
        });
        children.push(agent);
        await waitForOutput(master, /agent a1 connected from/);

        expect(
          (await api('POST', '/stacks', { name: 'prod', environment: 'production', variables: { region: 'eu-1' } }))
            .status,
        ).toBe(201);
        expect((await api('POST', '/stacks', { name: 'old', environment: 'staging', active: false })).status).toBe(201);
        // One value through the CLI, piped on stdin: never on a command line.
        const cli = { RUNNER_MASTER_URL: `http://${http}`, RUNNER_TOKEN: localToken(masterDir) };
        const added = await runRunner(['secret', 'add', 'prod', 'db_password'], {
          env: cli,
          input: `${SECRETS.db_password}\n`,
        });
        expect(added.stdout + added.stderr).toContain('secret db_password added to prod');
        for (const name of ['api_token', 'ssh_key'] as const)
          expect((await api('PUT', `/secrets/prod/${name}`, { value: SECRETS[name] })).status).toBe(200);
        // A stack name with a typo stores nothing that no run would read: 404, naming the stacks.
        const typo = await runRunner(['secret', 'add', 'prdo', 'db_password'], { env: cli, input: 'x\n' });
        expect(typo.code).not.toBe(0);
        expect(typo.stderr).toContain('stack "prdo" does not exist (did you mean "prod"?) (stacks: old, prod)');
        expect((await api('GET', '/secrets/prdo')).status).toBe(404);
        const listed = await runRunner(['secret', 'list', 'prod'], { env: cli });
        answers.push(listed.stdout);
        expect(listed.stdout).toMatch(/api_token[\s\S]*db_password[\s\S]*ssh_key/);

        // Refused before anything runs: production unconfirmed, an inactive stack, an unknown name.
        const start = (extra: Record<string, unknown>, content = WORKFLOW) =>
          api('POST', '/workflows/run', { content, workflow_name: 'secrets', ...extra });
        for (const [what, extra, content] of [
          ['unconfirmed', {}, WORKFLOW],
          ['inactive', { stack: 'old' }, WORKFLOW],
          [
            'unknown',
            { confirm: true },
            WORKFLOW.replace('error("failed holding " .. secrets.db_password)', 'error(secrets.db_pasword)'),
          ],
        ] as const) {
          const refused = await start(extra, content);
          refusals[what] = { status: refused.status, message: refused.body.error?.message };
        }

        const ws = new WebSocket(`ws://${http}/api/v1/ws`, { headers: localAuth(masterDir) });
        ws.on('message', (data: Buffer) => wsMessages.push(data.toString('utf8')));
        await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
        const follow = async (path: string, append: (text: string) => void, signal: AbortSignal) => {
          const stream = await fetch(`${base}${path}`, { signal, headers: localAuth(masterDir) });
          const reader = stream.body!.getReader();
          for (;;) {
            const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
            if (done) return;
            append(new TextDecoder().decode(value));
          }
        };
        const stopStreams = new AbortController();
        const agentStream = follow('/agents/a1/logs/stream', (text) => (agentSse += text), stopStreams.signal);

        const started = await start({ confirm: true });
        expect(started.status, JSON.stringify(started.body)).toBe(202);
        const id = started.body.id as string;
        const runStream = follow(`/executions/${id}/log/stream`, (text) => (runSse += text), stopStreams.signal);
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`run ${id} did not finish`)), 60_000);
          const check = () => {
            if (wsMessages.some((m) => m.includes(id) && /"type":"workflow\.(completed|failed)"/.test(m))) {
              clearTimeout(timer);
              resolve();
            }
          };
          ws.on('message', check);
          check();
        });
        run = (await api('GET', `/executions/${id}`)).body as typeof run;
        await api('GET', `/executions/${id}/log?limit=1000`);
        await api('GET', '/secrets/prod');
        await api('GET', '/stacks/prod');
        await api('GET', '/stacks');
        const deadline = Date.now() + 20_000;
        while (!agentSse.includes('task remote of secrets') && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 50));
        stopStreams.abort();
        await Promise.all([agentStream.catch(() => {}), runStream.catch(() => {})]);
        ws.close();
        agent.kill('SIGTERM');
        master.kill('SIGTERM');
        await Promise.all([agent, master].map((child) => new Promise((resolve) => child.once('close', resolve))));
      }, 150_000);

      it('refuses a production run unconfirmed, an inactive stack and an unknown secret name', () => {
        expect(refusals.unconfirmed.status).toBe(409);
        expect(refusals.unconfirmed.message).toMatch(/stack "prod" is production: confirm the run/);
        expect(refusals.inactive.status).toBe(400);
        expect(refusals.inactive.message).toMatch(/stack "old" is inactive/);
        expect(refusals.unknown.status).toBe(400);
        expect(refusals.unknown.message).toContain(
          'secrets.db_pasword: no such name in stack prod (did you mean "db_password"?)',
        );
      });

      it('ran with the stack: its variables, its secrets (masked in the record), the agent task', () => {
        expect(run.stack).toBe('prod');
        expect(run.tasks.map((t) => [t.name, t.status])).toEqual([
          ['local', 'succeeded'],
          ['fails', 'ignored'],
          ['remote', 'succeeded'],
        ]);
        const [local, fails, remote] = run.tasks;
        // The stack's value of a declared var overrides the file's; stack.vars reads it too.
        expect(local.message).toBe(`region eu-1/eu-1 ${MASK}`);
        expect(local.outputs?.url).toBe(MASK);
        expect(local.outputs?.nested).toEqual({ v: MASK });
        expect(String(local.outputs?.echoed)).toContain(MASK);
        expect(String(local.outputs?.b64)).toContain(MASK);
        expect(fails.message).toContain(`failed holding ${MASK}`);
        expect(remote.message).toBe(`agent says ${MASK}`);
      });

      it('appears in no API answer, WebSocket message or log stream, in any form', () => {
        expect(answers.length).toBeGreaterThan(8);
        for (const text of [...answers, ...wsMessages, runSse, agentSse]) expect(leaksIn(text)).toEqual([]);
        expect(runSse).toContain(MASK);
        // The agent's own log names the task it ran; the task's lines went to the run (runSse above).
        expect(agentSse).toContain('task remote of secrets');
        expect(answers.join('\n')).toContain('db_password');
      });

      it('is in no file of either data directory (runner.log at debug, the store) nor in a backup', async () => {
        const masterLog = readFileSync(join(masterDir, 'logs/runner.log'), 'utf8');
        expect(masterLog).toMatch(/"level":"debug"/);
        const keyFile = join(masterDir, 'secrets/master.key');
        for (const file of [...everyFile(masterDir), ...everyFile(agentDir)]) {
          if (file === keyFile) continue;
          expect(leaksIn(readFileSync(file).toString('latin1')), file).toEqual([]);
        }
        const backup = join(tempDataDir('runner-e2e-secrets-backup-'), 'backup.db');
        const made = await runRunner(['db', 'backup', '--output', backup], {
          env: { RUNNER_DATA_DIR: masterDir, ...storeEnv },
        });
        expect(made.code, made.stderr).toBe(0);
        const bytes = readFileSync(backup).toString('latin1');
        expect(bytes).toContain('db_password');
        expect(leaksIn(bytes)).toEqual([]);
        if (database) {
          const dump = execFileSync('pg_dump', ['-h', '127.0.0.1', '-U', 'postgres', database.name], {
            encoding: 'latin1',
            maxBuffer: 256 * 1024 * 1024,
          });
          expect(dump).toContain('db_password');
          expect(leaksIn(dump)).toEqual([]);
        }
      }, 60_000);

      it("is in neither process's terminal output", () => {
        for (const child of [master, agent]) expect(leaksIn(child.output.stdout + child.output.stderr)).toEqual([]);
      });
    },
  );
