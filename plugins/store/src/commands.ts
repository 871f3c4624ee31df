import type { CommandContext, CommandInput, CommandSpec } from '@runner/plugin-sdk';

type Handler = (input: CommandInput, ctx: CommandContext) => Promise<number | void>;

/** Handlers load on use: `runner --help` reads this tree without loading the store. */
function lazy(pick: (module: typeof import('./db-commands.js')) => Handler): Handler {
  return async (input, ctx) => pick(await import('./db-commands.js'))(input, ctx);
}

/** `runner db ...`: talks to the master's REST API when one holds the data directory. */
export const dbCommand: CommandSpec = {
  name: 'db',
  description: 'Database maintenance: backup, restore, copy, vacuum, stats',
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
    {
      name: 'restore',
      description: 'Replace the database with a backup (refused while a runner process uses the data directory)',
      arguments: [{ name: 'path', description: 'backup file', required: true }],
      options: [{ flags: '--decompress', description: 'the backup is gzip-compressed' }],
      run: lazy((m) => m.restoreCommand),
    },
    {
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
        { flags: '--output <format>', description: 'text or json', default: 'text', choices: ['text', 'json'] },
      ],
      run: lazy((m) => m.copyCommand),
    },
    {
      name: 'vacuum',
      description: 'Rebuild the database compactly and take a snapshot',
      run: lazy((m) => m.vacuumCommand),
    },
    {
      name: 'stats',
      description: 'Show sizes of the snapshot, the journal and each table',
      options: [
        { flags: '--output <format>', description: 'text or json', default: 'text', choices: ['text', 'json'] },
      ],
      run: lazy((m) => m.statsCommand),
    },
  ],
};
