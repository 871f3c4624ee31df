import {
  connectMaster,
  formatTable,
  InvalidInputError,
  MASTER_URL_OPTION,
  ROLES,
  writeLogin,
  type CommandContext,
  type CommandExtension,
  type CommandInput,
  type CommandOption,
  type CommandSpec,
} from '@runner/plugin-sdk';
import { auditListCommand } from './audit-command.js';
import { readPassword } from './cli-input.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const output: CommandOption = {
  flags: '--output <format>',
  description: 'text or json',
  choices: ['text', 'json'],
  default: 'text',
};
const passwordFile: CommandOption = {
  flags: '--password-file <file>',
  description: 'read the password from this file (else RUNNER_PASSWORD, else stdin)',
};
const role = (required: boolean): CommandOption => ({
  flags: required ? '--role <role>' : '--role <role>',
  description: `one of ${ROLES.join(', ')}`,
  choices: [...ROLES],
});
const enc = encodeURIComponent;

async function login({ options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const username = typeof options.username === 'string' ? options.username : 'admin';
  const password = await readPassword(ctx, options.passwordFile, `password for ${username}: `);
  const answer = await master.call<{ token: string; expires_at: string; user: { name: string; role: string } }>(
    'POST',
    '/auth/login',
    { body: { username, password } },
  );
  await writeLogin(ctx.config.dataDir, master.endpoint.base, {
    token: answer.token,
    user: answer.user.name,
    expires_at: answer.expires_at,
  });
  ctx.stdout.write(
    `logged in to ${master.endpoint.base} as ${answer.user.name} (${answer.user.role}) until ${answer.expires_at}\n`,
  );
  return 0;
}

async function logout({ options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  await master.call('POST', '/auth/logout');
  await writeLogin(ctx.config.dataDir, master.endpoint.base, undefined);
  ctx.stdout.write(`logged out of ${master.endpoint.base}\n`);
  return 0;
}

async function whoami({ options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const me = await master.call<{ name: string; role: string; method: string }>('GET', '/auth/me');
  ctx.stdout.write(
    options.output === 'json' ? json(me) : `${me.name} (${me.role}, by ${me.method}) at ${master.endpoint.base}\n`,
  );
  return 0;
}

interface UserView {
  name: string;
  role: string;
  created_at: string;
  updated_at: string;
}

const userCommand: CommandSpec = {
  name: 'user',
  description: 'manage the users of a master (admin only)',
  subcommands: [
    {
      name: 'add',
      description: 'add a user; without a password one is generated and printed once',
      arguments: [{ name: 'name', description: 'user name', required: true }],
      options: [
        MASTER_URL_OPTION,
        { ...role(true), description: `${role(true).description} (default viewer)` },
        passwordFile,
        { flags: '--generate-password', description: 'let the master generate the password and print it once' },
      ],
      run: async ({ args, options }, ctx) => {
        const master = await connectMaster(ctx, options.masterUrl);
        const password = options.generatePassword
          ? undefined
          : await readPassword(ctx, options.passwordFile, `password for ${args[0]}: `);
        const answer = await master.call<{ user: UserView; password?: string }>('POST', '/users', {
          body: { name: args[0], role: options.role ?? 'viewer', ...(password === undefined ? {} : { password }) },
        });
        ctx.stdout.write(`user ${answer.user.name} added (${answer.user.role})\n`);
        if (answer.password) ctx.stdout.write(`password (shown once): ${answer.password}\n`);
        return 0;
      },
    },
    {
      name: 'list',
      description: 'list users',
      options: [MASTER_URL_OPTION, output],
      run: async ({ options }, ctx) => {
        const master = await connectMaster(ctx, options.masterUrl);
        const answer = await master.call<{ users: UserView[] }>('GET', '/users');
        if (options.output === 'json') ctx.stdout.write(json(answer));
        else
          ctx.stdout.write(
            formatTable(
              ['NAME', 'ROLE', 'CREATED', 'UPDATED'],
              answer.users.map((u) => [u.name, u.role, u.created_at, u.updated_at]),
            ),
          );
        return 0;
      },
    },
    {
      name: 'remove',
      description: 'remove a user (not the last admin)',
      arguments: [{ name: 'name', description: 'user name', required: true }],
      options: [MASTER_URL_OPTION],
      run: async ({ args, options }, ctx) => {
        const master = await connectMaster(ctx, options.masterUrl);
        await master.call('DELETE', `/users/${enc(args[0])}`);
        ctx.stdout.write(`user ${args[0]} removed\n`);
        return 0;
      },
    },
    {
      name: 'passwd',
      description: "set a user's password",
      arguments: [{ name: 'name', description: 'user name', required: true }],
      options: [
        MASTER_URL_OPTION,
        passwordFile,
        { flags: '--generate-password', description: 'let the master generate the password and print it once' },
      ],
      run: async ({ args, options }, ctx) => {
        const master = await connectMaster(ctx, options.masterUrl);
        const password = options.generatePassword
          ? undefined
          : await readPassword(ctx, options.passwordFile, `new password for ${args[0]}: `);
        const answer = await master.call<{ user: UserView; password?: string }>(
          'PUT',
          `/users/${enc(args[0])}/password`,
          {
            body: password === undefined ? {} : { password },
          },
        );
        ctx.stdout.write(`password of ${answer.user.name} changed\n`);
        if (answer.password) ctx.stdout.write(`password (shown once): ${answer.password}\n`);
        return 0;
      },
    },
    {
      name: 'role',
      description: "change a user's role",
      arguments: [
        { name: 'name', description: 'user name', required: true },
        { name: 'role', description: ROLES.join(', '), required: true, choices: [...ROLES] },
      ],
      options: [MASTER_URL_OPTION],
      run: async ({ args, options }, ctx) => {
        const master = await connectMaster(ctx, options.masterUrl);
        const answer = await master.call<{ user: UserView }>('PUT', `/users/${enc(args[0])}/role`, {
          body: { role: args[1] },
        });
        ctx.stdout.write(`${answer.user.name} is now ${answer.user.role}\n`);
        return 0;
      },
    },
  ],
};

interface TokenView {
  name: string;
  role: string;
  created_by: string;
  created_at: string;
  expires_at: string | null;
}

const authCommand: CommandSpec = {
  name: 'auth',
  description: 'API tokens for CI, and who you are to a master',
  subcommands: [
    {
      name: 'token',
      description: 'API tokens (sent as Authorization: Bearer <token>, or RUNNER_TOKEN for the CLI)',
      subcommands: [
        {
          name: 'create',
          description: 'create a token; it is printed once (the master keeps only its hash)',
          options: [
            MASTER_URL_OPTION,
            { flags: '--name <name>', description: 'token name (to list and revoke it)' },
            { ...role(true), description: `${role(true).description}: what the token may do` },
            { flags: '--expires <duration>', description: 'lifetime, e.g. 90d (default: no expiry)' },
          ],
          run: async ({ options }, ctx) => {
            if (typeof options.name !== 'string')
              throw new InvalidInputError('--name <name> is required', { field: 'name' });
            if (typeof options.role !== 'string')
              throw new InvalidInputError(`--role is required (${ROLES.join(', ')})`, { field: 'role' });
            const master = await connectMaster(ctx, options.masterUrl);
            const answer = await master.call<{ token: string; info: TokenView }>('POST', '/auth/tokens', {
              body: {
                name: options.name,
                role: options.role,
                ...(options.expires ? { expires: options.expires } : {}),
              },
            });
            // The token is the command's output, on its own line, so `$(runner auth token create ...)` works.
            ctx.stdout.write(`${answer.token}\n`);
            ctx.stderr.write(
              `token ${answer.info.name} (${answer.info.role}) created${answer.info.expires_at ? `, expires ${answer.info.expires_at}` : ''}; it is shown only now\n`,
            );
            return 0;
          },
        },
        {
          name: 'list',
          description: 'list tokens (never the tokens themselves)',
          options: [MASTER_URL_OPTION, output],
          run: async ({ options }, ctx) => {
            const master = await connectMaster(ctx, options.masterUrl);
            const answer = await master.call<{ tokens: TokenView[] }>('GET', '/auth/tokens');
            if (options.output === 'json') ctx.stdout.write(json(answer));
            else
              ctx.stdout.write(
                formatTable(
                  ['NAME', 'ROLE', 'CREATED BY', 'CREATED', 'EXPIRES'],
                  answer.tokens.map((t) => [t.name, t.role, t.created_by, t.created_at, t.expires_at ?? 'never']),
                ),
              );
            return 0;
          },
        },
        {
          name: 'revoke',
          description: 'revoke a token by name',
          arguments: [{ name: 'name', description: 'token name', required: true }],
          options: [MASTER_URL_OPTION],
          run: async ({ args, options }, ctx) => {
            const master = await connectMaster(ctx, options.masterUrl);
            await master.call('DELETE', `/auth/tokens/${enc(args[0])}`);
            ctx.stdout.write(`token ${args[0]} revoked\n`);
            return 0;
          },
        },
      ],
    },
    { name: 'whoami', description: 'who the CLI is to the master', options: [MASTER_URL_OPTION, output], run: whoami },
    {
      name: 'roles',
      description: 'the roles and the permissions each holds (GET /api/v1/auth/roles)',
      options: [MASTER_URL_OPTION, output],
      run: roles,
    },
  ],
};

interface RolesView {
  roles: { name: string; permissions: string[] }[];
  permissions: { name: string; description: string }[];
}

/** One row per permission, a column per role: who may do what, at a glance. */
async function roles({ options }: CommandInput, ctx: CommandContext): Promise<number> {
  const master = await connectMaster(ctx, options.masterUrl);
  const answer = await master.call<RolesView>('GET', '/auth/roles');
  if (options.output === 'json') {
    ctx.stdout.write(json(answer));
    return 0;
  }
  const held = answer.roles.map((r) => new Set(r.permissions));
  const rows = answer.permissions.map((p) => [
    p.name,
    ...held.map((set) => (set.has(p.name) ? 'yes' : '-')),
    p.description,
  ]);
  ctx.stdout.write(formatTable(['PERMISSION', ...answer.roles.map((r) => r.name.toUpperCase()), 'ALLOWS'], rows));
  return 0;
}

const loginCommand: CommandSpec = {
  name: 'login',
  description: 'log in to a master and keep the session token for it (<data-dir>/auth/logins.json, 0600)',
  options: [MASTER_URL_OPTION, { flags: '--username <name>', description: 'user name (default admin)' }, passwordFile],
  run: login,
};

const logoutCommand: CommandSpec = {
  name: 'logout',
  description: 'revoke the kept session token of a master and forget it',
  options: [MASTER_URL_OPTION],
  run: logout,
};

const auditCommand: CommandSpec = {
  name: 'audit',
  description: 'the audit log of a master (admin only)',
  subcommands: [auditListCommand],
};

export const AUTH_COMMANDS: readonly CommandSpec[] = [
  loginCommand,
  logoutCommand,
  userCommand,
  authCommand,
  auditCommand,
];

function onOff(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['on', 'true', 'yes', '1'].includes(v)) return true;
  if (['off', 'false', 'no', '0'].includes(v)) return false;
  throw new InvalidInputError(`--auth: "${value}" is not on or off`, { field: 'auth' });
}

const serverOptions: CommandOption[] = [
  {
    flags: '--auth [on|off]',
    description: 'require credentials (default on, config auth.enabled)',
    parse: onOff,
    configKey: 'auth.enabled',
  },
  {
    flags: '--username <name>',
    description: 'the admin account to create or update with --password-file (default admin)',
    configKey: 'auth.admin_username',
  },
  {
    flags: '--password-file <file>',
    description: "set the admin account's password from this file (or RUNNER_AUTH_ADMIN_PASSWORD)",
    configKey: 'auth.admin_password_file',
  },
  {
    flags: '--password <password>',
    description: 'refused: a password flag shows in ps; use --password-file or RUNNER_AUTH_ADMIN_PASSWORD',
    parse: () => {
      throw new InvalidInputError(
        '--password would show the password to every user of this host (ps); use --password-file <file> or RUNNER_AUTH_ADMIN_PASSWORD',
        { field: 'password' },
      );
    },
  },
];

/** `--auth`, `--username`, `--password-file` on the commands that start a master. */
export const AUTH_COMMAND_OPTIONS: readonly CommandExtension[] = [
  { command: 'server', options: serverOptions },
  { command: 'ui', options: serverOptions },
];
