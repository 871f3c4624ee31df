// The held-out check of issue 23, for real on this machine (root, Debian, apt): one workflow
// installs a package, adds a user, writes a config from a template, installs a unit (and starts it
// where systemd runs: not on this machine, whose PID 1 is not systemd, so the unit file is written
// and the start is left out) and asserts it all with infra_test. A dry-run on the fresh host
// changes nothing and says what it would change; the first run changes each thing; the second
// changes nothing. It runs with the embedded profile (`runner run`), as the operator's own user.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowEngineRef, type RunRecord } from '@runner/plugin-sdk';
import { createTestKernel, luaCallContext, type TestKernel } from '@runner/plugin-sdk/testing';
import { plugin as luaRuntime } from '@runner/plugin-lua-runtime';
import { plugin as scriptModules } from '@runner/plugin-modules-script';
import { plugin as store } from '@runner/plugin-store';
import { plugin as template } from '@runner/plugin-template';
import { plugin as workflow } from '@runner/plugin-workflow';
import { plugin as engine } from '@runner/plugin-engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plugin as hostModules } from '../index.js';
import { account } from './user/user.js';
import { createPkgModule } from './pkg/pkg.js';
import { createUserModule } from './user/user.js';
import { queryInstalled } from './pkg/pkg.js';
import { SYSTEMD_RUNNING_MARK } from './systemd/systemd.js';

const PACKAGE = 'sl';
const USER = 'rnr-heldout';
const dir = mkdtempSync(join(tmpdir(), 'host-workflow-'));
const config = join(dir, 'etc', 'app.conf');
const unitDir = join(dir, 'units');
const systemd = existsSync(SYSTEMD_RUNNING_MARK);
writeFileSync(join(dir, 'app.conf.j2'), 'listen = {{ port }}\nuser = {{ user }}\n');

const flow = `
version: "1.0"
vars:
  port: "8080"
tasks:
  - name: package
    dry_run: run
    exec:
      script: |
        local r = pkg.install("${PACKAGE}")
        return true, r.note, { changed = r.changed }
  - name: user
    dry_run: run
    exec:
      script: |
        local r = user.present("${USER}", { shell = "/bin/sh", comment = "runner held-out check" })
        return true, r.note, { changed = r.changed }
  - name: config
    dry_run: run
    exec:
      script: |
        file.mkdir("${dir}/etc")
        local r = file.template("${dir}/app.conf.j2", "${config}", { port = vars.port, user = "${USER}" }, { mode = "0640" })
        return true, r.note, { changed = r.changed }
  - name: unit
    dry_run: run
    exec:
      script: |
        local r = systemd.install_unit("rnr-heldout.service", "[Service]\\nExecStart=/usr/games/sl\\nUser=${USER}\\n", { dir = "${unitDir}" })
        local changed = r.changed
        if ${systemd} then
          changed = systemd.enable("rnr-heldout").changed or changed
          changed = systemd.start("rnr-heldout").changed or changed
        end
        return true, r.note, { changed = changed }
  - name: assert
    depends_on: [package, user, config, unit]
    exec:
      script: |
        return true, nil, infra_test.verify({
          { package = "${PACKAGE}" },
          { command = "id -u ${USER}" },
          { file = "${config}", mode = "0640", owner = "root", contains = "listen = 8080" },
          { file = "${unitDir}/rnr-heldout.service", contains = "User=${USER}" },
        })
`;

let kernel: TestKernel;
beforeAll(async () => {
  kernel = await createTestKernel({
    plugins: [store, template, luaRuntime, scriptModules, hostModules, workflow, engine],
    profile: 'embedded',
    dataDir: join(dir, 'data'),
  });
  await kernel.ready();
});

afterAll(async () => {
  // Put the host back as it was, through the modules (which reports what they changed).
  const { call } = luaCallContext();
  await createUserModule().absent(call, USER, { remove_home: true });
  await createPkgModule().remove(call, PACKAGE);
  await kernel.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function run(dryRun: boolean): Promise<RunRecord> {
  const { done } = await kernel.get(WorkflowEngineRef).start({ source: { content: flow, name: 'held-out' }, dryRun });
  return done;
}

const changedBy = (record: RunRecord) =>
  Object.fromEntries(record.tasks.filter((t) => t.name !== 'assert').map((t) => [t.name, t.outputs?.changed]));

describe('a host workflow: package, user, config from a template, unit, infra_test', () => {
  it('changes nothing under dry-run, everything on the first run, nothing on the second', async () => {
    expect(
      await queryInstalled(PACKAGE, new AbortController().signal),
      `${PACKAGE} must not be installed before`,
    ).toBeNull();
    expect(await account(USER)).toBeNull();

    const dry = await run(true);
    expect(dry.status, JSON.stringify(dry.tasks)).toBe('succeeded');
    // It says what it would change...
    expect(changedBy(dry)).toEqual({ package: true, user: true, config: true, unit: true });
    expect(dry.tasks.find((t) => t.name === 'package')?.message).toContain(`would install ${PACKAGE}`);
    // ...and changes none of it.
    expect(await queryInstalled(PACKAGE, new AbortController().signal)).toBeNull();
    expect(await account(USER)).toBeNull();
    expect(existsSync(config)).toBe(false);
    expect(existsSync(join(unitDir, 'rnr-heldout.service'))).toBe(false);

    const first = await run(false);
    expect(first.status, JSON.stringify(first.tasks)).toBe('succeeded');
    expect(changedBy(first)).toEqual({ package: true, user: true, config: true, unit: true });
    expect(first.tasks.find((t) => t.name === 'assert')?.status).toBe('succeeded');
    expect(readFileSync(config, 'utf8')).toBe(`listen = 8080\nuser = ${USER}\n`);

    const second = await run(false);
    expect(second.status, JSON.stringify(second.tasks)).toBe('succeeded');
    expect(changedBy(second)).toEqual({ package: false, user: false, config: false, unit: false });

    const dryAgain = await run(true);
    expect(changedBy(dryAgain)).toEqual({ package: false, user: false, config: false, unit: false });
  }, 180_000);
});
