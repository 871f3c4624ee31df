import { readFile } from 'node:fs/promises';
import {
  InvalidInputError,
  resourceCommand,
  type CommandContext,
  type CommandSpec,
  type SshProfile,
} from '@runner/plugin-sdk';
import { deleteSshName, getSsh, getSshName, getSshNameAudit, postSsh, postSshNameTest, putSshName } from './api.js';

/** Reads all of stdin (a password piped in stays out of shell history and `ps`). */
async function readStdin(ctx: CommandContext): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** The credential options: never a value on the command line. */
const credentialOptions = [
  { flags: '--password-stdin', description: 'auth-type password: read the password from stdin (stored encrypted)' },
  {
    flags: '--private-key-file <file>',
    description: 'auth-type key: read a private key from this local file and store it encrypted on the master',
  },
];

async function credentialBody(
  input: { options: Record<string, unknown> },
  ctx: CommandContext,
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  if (input.options.passwordStdin === true) {
    const password = await readStdin(ctx);
    if (!password) throw new InvalidInputError('--password-stdin: stdin was empty', { field: 'password' });
    body.password = password;
  }
  if (typeof input.options.privateKeyFile === 'string')
    body.private_key = await readFile(input.options.privateKeyFile, 'utf8');
  return body;
}

function showProfile(profile: SshProfile): string {
  const lines = [
    ['name', profile.name],
    ['target', `${profile.user}@${profile.host}:${profile.port}`],
    [
      'auth',
      profile.auth_type === 'key' ? (profile.key_path ?? 'key (stored encrypted)') : 'password (stored encrypted)',
    ],
    ['host key', profile.host_key ? `${profile.host_key.type} ${profile.host_key.fingerprint}` : 'not pinned'],
    ['workflows', profile.workflows ? 'may use it' : 'may not use it'],
    ['connections', String(profile.connection_count)],
    ['last used', profile.last_used_at ?? 'never'],
    ['description', profile.description || '-'],
  ];
  return lines.map(([k, v]) => `${`${k}:`.padEnd(13)}${v}\n`).join('');
}

/** `runner ssh list|add|get|update|remove|test|audit`: each one of the plugin's routes (api.ts). */
export const sshCommand: CommandSpec = resourceCommand({
  name: 'ssh',
  description:
    'SSH profiles: hosts the master connects to (ssh module, terminal), with a pinned host key and an audit log',
  actions: [
    {
      name: 'list',
      aliases: ['ls'],
      route: getSsh,
      rows: 'profiles',
      empty: 'no SSH profiles (add one with runner ssh add <name> --host h --user u --auth-type key --key-path f)\n',
      columns: [
        { header: 'NAME', field: 'name' },
        { header: 'TARGET', value: (p) => `${p.user}@${p.host}:${p.port}` },
        { header: 'AUTH', field: 'auth_type' },
        {
          header: 'HOST KEY',
          value: (p) => (p.host_key as { fingerprint: string } | undefined)?.fingerprint ?? 'not pinned',
        },
        { header: 'CONNECTIONS', field: 'connection_count' },
        { header: 'LAST USED', value: (p) => p.last_used_at ?? 'never' },
      ],
    },
    {
      name: 'add',
      route: postSsh,
      description: 'add a profile; connect once with runner ssh test <name> --trust-host-key to pin its host key',
      positional: ['name'],
      omit: ['password', 'private_key'],
      options: credentialOptions,
      body: credentialBody,
      text: (p: SshProfile) => `SSH profile ${p.name} added (${p.user}@${p.host}:${p.port})\n`,
    },
    { name: 'get', aliases: ['show'], route: getSshName, text: showProfile },
    {
      name: 'update',
      route: putSshName,
      description: 'replace a profile (give every field; a stored credential is kept while the auth type stays)',
      omit: ['password', 'private_key'],
      options: credentialOptions,
      body: credentialBody,
      text: showProfile,
    },
    {
      name: 'remove',
      aliases: ['rm'],
      route: deleteSshName,
      text: (_answer: unknown, input) => `SSH profile ${input.args.name} removed\n`,
    },
    {
      name: 'test',
      route: postSshNameTest,
      description: 'connect and run uname -a; --trust-host-key pins the host key of a profile that has none',
      timeoutMs: 60_000,
      text: (r: { host_key: { type: string; fingerprint: string }; remote: string; duration_ms: number }, input) =>
        `SSH profile ${input.args.name}: connected in ${r.duration_ms} ms, host key ${r.host_key.type} ${r.host_key.fingerprint}\n${r.remote}\n`,
    },
    {
      name: 'audit',
      route: getSshNameAudit,
      description: "a profile's audit log, newest first",
      rows: 'entries',
      empty: 'no audit entries\n',
      columns: [
        { header: 'AT', field: 'at' },
        { header: 'ACTOR', field: 'actor' },
        { header: 'ACTION', field: 'action' },
        { header: 'RESULT', value: (e) => e.result ?? '' },
        { header: 'DETAIL', field: 'detail' },
      ],
    },
  ],
});
