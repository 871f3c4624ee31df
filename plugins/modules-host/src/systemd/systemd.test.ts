// This machine's PID 1 is not systemd (no /run/systemd/system): the units cannot be started here,
// so what is tested for real is the clear error every unit function gives, and install_unit writing
// the file (its daemon-reload skipped and said so). Starting units is left untested here.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { luaCallContext } from '@runner/plugin-sdk/testing';
import { describe, expect, it } from 'vitest';
import { createSystemdModule, SYSTEMD_RUNNING_MARK, unitName } from './systemd.js';

const systemd = createSystemdModule();
const running = existsSync(SYSTEMD_RUNNING_MARK);

describe('systemd where systemd is not running', () => {
  it.skipIf(running)('says so for every function that needs it', async () => {
    const { call } = luaCallContext();
    for (const fn of ['start', 'stop', 'restart', 'reload', 'enable', 'disable', 'status', 'journal'] as const)
      await expect((systemd[fn] as (...a: unknown[]) => Promise<unknown>)(call, 'nginx')).rejects.toThrow(
        `systemd.${fn}: systemd is not running on this host`,
      );
  });

  it('writes a unit file only when it differs, reloading systemd where it runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'systemd-test-'));
    const unit = '[Unit]\nDescription=test\n[Service]\nExecStart=/bin/true\n';
    const dry = luaCallContext({ dryRun: true }).call;
    expect(await systemd.install_unit(dry, 'app', unit, { dir })).toMatchObject({ changed: true, skipped: true });
    expect(existsSync(join(dir, 'app.service'))).toBe(false);
    const { call, lines } = luaCallContext();
    expect(await systemd.install_unit(call, 'app', unit, { dir })).toEqual({
      changed: true,
      path: join(dir, 'app.service'),
      reloaded: running,
    });
    expect(readFileSync(join(dir, 'app.service'), 'utf8')).toBe(unit);
    if (!running)
      expect(lines.map((l) => l.message)).toContain(
        `systemd is not running here: ${join(dir, 'app.service')} written, daemon-reload skipped`,
      );
    expect(await systemd.install_unit(call, 'app.service', unit, { dir })).toMatchObject({ changed: false });
  });

  it('names a unit as systemctl does', () => {
    expect(unitName('start', 'nginx')).toBe('nginx.service');
    expect(unitName('start', 'backup.timer')).toBe('backup.timer');
    expect(() => unitName('start', '../x')).toThrow("a unit name has no '/'");
  });
});
