import {
  formatBytes,
  localAction,
  resourceCommand,
  type CommandContext,
  type CommandInput,
  type CommandSpec,
} from '@runner/plugin-sdk';

type Handler = (input: CommandInput, ctx: CommandContext) => Promise<number | void>;
type DbCommands = typeof import('./db-commands.js');

/** The implementations load on use: `runner --help` reads this tree without loading the store. */
const load = (): Promise<DbCommands> => import('./db-commands.js');
function lazy(pick: (module: DbCommands) => Handler): Handler {
  return async (input, ctx) => pick(await load())(input, ctx);
}

/**
 * `runner db ...`: talks to the master's REST API when one holds the data directory. Each
 * subcommand but backup is a local action of the resource helper (`--output table|json|yaml`);
 * backup's `--output` is the file it writes, as service.md has it.
 */
export const dbCommand: CommandSpec = resourceCommand({
  name: 'db',
  description: 'Database maintenance: backup, restore, copy, repair, vacuum, stats',
  actions: [
    localAction({
      name: 'restore',
      description: 'Replace the database with a backup (refused while a runner process uses the data directory)',
      arguments: [{ name: 'path', description: 'backup file', required: true }],
      options: [{ flags: '--decompress', description: 'the backup is gzip-compressed' }],
      local: async (input, ctx) => (await load()).restoreDb(input, ctx),
      text: async (answer) => (await load()).restoreText(answer),
    }),
    localAction({
      name: 'copy',
      description:
        'Copy every table from one store to another (a data directory or postgres://...), verifying row counts and checksums',
      options: [
        {
          flags: '--from <store>',
          description: 'the data directory or PostgreSQL URL to copy from (stop its masters first)',
        },
        { flags: '--to <store>', description: 'the data directory or PostgreSQL URL to copy into' },
        { flags: '--overwrite', description: 'replace what the target holds (refused by default when it has any row)' },
      ],
      local: async (input, ctx) => (await load()).copyDb(input, ctx),
      text: async ({ from, to, tables }) => (await load()).formatCopyReport(from, to, tables),
    }),
    localAction({
      name: 'repair',
      description:
        'Rebuild a damaged store from what is intact, report exactly what was dropped, and keep the originals (stop the master first)',
      options: [{ flags: '--dry-run', description: 'report what a repair would keep and drop, change nothing' }],
      local: async (input, ctx) => (await load()).repairDb(input, ctx),
      text: async (report) => (await load()).formatRepairReport(report),
    }),
    localAction({
      name: 'vacuum',
      description: 'Rebuild the database compactly and take a snapshot',
      local: async (_input, ctx) => (await load()).vacuumDb(ctx),
      text: ({ bytesBefore, bytesAfter }) => `vacuum: ${formatBytes(bytesBefore)} -> ${formatBytes(bytesAfter)}\n`,
    }),
    localAction({
      name: 'stats',
      description: 'Show sizes of the snapshot, the journal and each table',
      local: async (_input, ctx) => (await load()).readDbStats(ctx),
      text: async (stats, _input, _master, ctx) => (await load()).statsText(stats, ctx),
    }),
  ],
  subcommands: [
    {
      name: 'backup',
      description: 'Write a consistent copy of the database (through the master when one is running)',
      options: [
        { flags: '-o, --output <path>', description: 'file to write (replaced atomically)' },
        { flags: '--compress', description: 'gzip the copy' },
      ],
      run: lazy((m) => m.backupCommand),
    },
  ],
});
