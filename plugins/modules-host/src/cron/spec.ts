import { defineLuaModule } from '@runner/plugin-sdk';

const dir = { name: 'opts', type: '{dir?: string}', optional: true };

/** Static declaration of the `cron` module. */
export const cronModule = defineLuaModule({
  name: 'cron',
  description: 'Crontab entries, one file per entry in /etc/cron.d',
  docs: `
Each entry is the file /etc/cron.d/<name> holding "<schedule> <user> <command>", read by cron
(Debian's cron, cronie) without a reload. The schedule has five fields or is one of @reboot,
@hourly, @daily, @weekly, @monthly, @yearly. opts.dir names another directory. A name is letters,
digits, '-' and '_' (cron ignores files named otherwise).`,
  functions: {
    present: {
      args: [
        { name: 'name', type: 'string' },
        { name: 'schedule', type: 'string' },
        { name: 'command', type: 'string' },
        { name: 'opts', type: '{user?: string, dir?: string, env?: table}', optional: true },
      ],
      result: '{changed, path}',
      description: 'Writes the entry (run as opts.user, root by default; env lines before it) when it differs.',
      sideEffects: true,
      callsLua: false,
      example: `cron.present("backup", "15 3 * * *", "/usr/local/bin/backup --quiet", { user = "backup" })`,
    },
    absent: {
      args: [{ name: 'name', type: 'string' }, dir],
      result: '{changed, path}',
      description: 'Removes the entry if it exists.',
      sideEffects: true,
      callsLua: false,
      example: `cron.absent("backup")`,
    },
    list: {
      args: [dir],
      result: '{name, schedule, user, command}[]',
      description: 'The entries of the directory (comment and variable lines left out).',
      sideEffects: false,
      callsLua: false,
      example: `for _, e in ipairs(cron.list()) do print(e.name, e.schedule) end`,
    },
  },
});
