import {
  actionCommand,
  formatTable,
  InvalidInputError,
  resourceAction,
  resourceCommand,
  writeLogin,
  type ActionInput,
  type CommandContext,
  type CommandExtension,
  type CommandOption,
  type CommandSpec,
} from '@runner/plugin-sdk';
import * as api from './api.js';
import { auditAction } from './audit-command.js';
import { readPassword } from './cli-input.js';

// Every command here is a route of api.ts declared as a resource action (plugin-sdk's
// resourceCommand): options from the route's schemas, `--output table|json|yaml`, one error mapping.

const passwordFile: CommandOption = {
  flags: '--password-file <file>',
  description: 'read the password from this file (else RUNNER_PASSWORD, else stdin)',
};
const generatePassword: CommandOption = {
  flags: '--generate-password',
  description: 'let the master generate the password and print it once',
};
/** Passwords never come from a flag (flags show in `ps`): the schema's `password` is not offered. */
const NO_PASSWORD_FLAG = ['password'];

/** The password a user command sends: none with --generate-password (the master makes one). */
async function passwordBody(input: ActionInput, ctx: CommandContext, prompt: string) {
  if (input.options.generatePassword === true) return {};
  return { password: await readPassword(ctx, input.options.passwordFile, prompt) };
}

const shownOnce = (password: string | undefined) => (password ? `password (shown once): ${password}\n` : '');

const userCommand: CommandSpec = resourceCommand({
  name: 'user',
  description: 'manage the users of a master (admin only)',
  actions: [
    resourceAction(api.postUsers, {
      name: 'add',
      description: 'add a user; without a password one is generated and printed once',
      positional: ['name'],
      omit: NO_PASSWORD_FLAG,
      options: [passwordFile, generatePassword],
      body: async (input, ctx) => ({
        role: input.options.role ?? 'viewer',
        ...(await passwordBody(input, ctx, `password for ${input.args.name}: `)),
      }),
      text: ({ user, password }) => `user ${user.name} added (${user.role})\n${shownOnce(password)}`,
    }),
    resourceAction(api.getUsers, {
      name: 'list',
      aliases: ['ls'],
      description: 'list users',
      rows: 'users',
      empty: 'no users',
      columns: [
        { header: 'NAME', field: 'name' },
        { header: 'ROLE', field: 'role' },
        { header: 'CREATED', field: 'created_at' },
        { header: 'UPDATED', field: 'updated_at' },
      ],
    }),
    resourceAction(api.deleteUsersName, {
      name: 'remove',
      aliases: ['rm'],
      description: 'remove a user (not the last admin)',
      text: (_answer, input) => `user ${input.args.name} removed\n`,
    }),
    resourceAction(api.putUsersNamePassword, {
      name: 'passwd',
      description: "set a user's password",
      omit: NO_PASSWORD_FLAG,
      options: [passwordFile, generatePassword],
      body: (input, ctx) => passwordBody(input, ctx, `new password for ${input.args.name}: `),
      text: ({ user, password }) => `password of ${user.name} changed\n${shownOnce(password)}`,
    }),
    resourceAction(api.putUsersNameRole, {
      name: 'role',
      description: "change a user's role",
      positional: ['role'],
      text: ({ user }) => `${user.name} is now ${user.role}\n`,
    }),
  ],
});

const tokenCommand: CommandSpec = resourceCommand({
  name: 'token',
  description: 'API tokens (sent as Authorization: Bearer <token>, or RUNNER_TOKEN for the CLI)',
  actions: [
    resourceAction(api.postAuthTokens, {
      name: 'create',
      description: 'create a token; it is printed once (the master keeps only its hash)',
      // The token is the command's output, on its own line, so `$(runner auth token create ...)` works.
      text: ({ token }) => `${token}\n`,
      note: ({ info }) =>
        `token ${info.name} (${info.role}) created${info.expires_at ? `, expires ${info.expires_at}` : ''}; it is shown only now\n`,
    }),
    resourceAction(api.getAuthTokens, {
      name: 'list',
      aliases: ['ls'],
      description: 'list tokens (never the tokens themselves)',
      rows: 'tokens',
      empty: 'no API tokens (create one with runner auth token create --name <name> --role <role>)',
      columns: [
        { header: 'NAME', field: 'name' },
        { header: 'ROLE', field: 'role' },
        { header: 'CREATED BY', field: 'created_by' },
        { header: 'CREATED', field: 'created_at' },
        { header: 'EXPIRES', value: (t) => t.expires_at ?? 'never' },
      ],
    }),
    resourceAction(api.deleteAuthTokensName, {
      name: 'revoke',
      description: 'revoke a token by name',
      text: (_answer, input) => `token ${input.args.name} revoked\n`,
    }),
  ],
});

const authCommand: CommandSpec = {
  name: 'auth',
  description: 'API tokens for CI, and who you are to a master',
  subcommands: [
    tokenCommand,
    actionCommand(
      resourceAction(api.getAuthMe, {
        name: 'whoami',
        description: 'who the CLI is to the master',
        text: (me, _input, master) => `${me.name} (${me.role}, by ${me.method}) at ${master.endpoint.base}\n`,
      }),
    ),
    actionCommand(
      resourceAction(api.getAuthRoles, {
        name: 'roles',
        description: 'the roles and the permissions each holds (GET /api/v1/auth/roles)',
        // One row per permission, a column per role: who may do what, at a glance.
        text: ({ roles, permissions }) => {
          const held = roles.map((r) => new Set(r.permissions));
          const rows = permissions.map((p) => [
            p.name,
            ...held.map((set) => (set.has(p.name) ? 'yes' : '-')),
            p.description,
          ]);
          return formatTable(['PERMISSION', ...roles.map((r) => r.name.toUpperCase()), 'ALLOWS'], rows);
        },
      }),
    ),
  ],
};

const loginCommand: CommandSpec = actionCommand(
  resourceAction(api.postAuthLogin, {
    name: 'login',
    description: 'log in to a master and keep the session token for it (<data-dir>/auth/logins.json, 0600)',
    omit: NO_PASSWORD_FLAG,
    options: [passwordFile],
    body: async (input, ctx) => {
      const username = typeof input.options.username === 'string' ? input.options.username : 'admin';
      return { username, password: await readPassword(ctx, input.options.passwordFile, `password for ${username}: `) };
    },
    after: (answer, _input, master, ctx) =>
      writeLogin(ctx.config.dataDir, master.endpoint.base, {
        token: answer.token,
        user: answer.user.name,
        expires_at: answer.expires_at,
      }),
    text: (answer, _input, master) =>
      `logged in to ${master.endpoint.base} as ${answer.user.name} (${answer.user.role}) until ${answer.expires_at}\n`,
  }),
);

const logoutCommand: CommandSpec = actionCommand(
  resourceAction(api.postAuthLogout, {
    name: 'logout',
    description: 'revoke the kept session token of a master and forget it',
    after: (_answer, _input, master, ctx) => writeLogin(ctx.config.dataDir, master.endpoint.base, undefined),
    text: (_answer, _input, master) => `logged out of ${master.endpoint.base}\n`,
  }),
);

const auditCommand: CommandSpec = resourceCommand({
  name: 'audit',
  description: 'the audit log of a master (admin only)',
  actions: [auditAction],
});

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
