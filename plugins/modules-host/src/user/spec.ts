import { defineLuaModule } from '@runner/plugin-sdk';

const user = { name: 'name', type: 'string' };

/** Static declaration of the `user` module: `runner modules info user` prints it. */
export const userModule = defineLuaModule({
  name: 'user',
  description: 'Users, groups, group membership and SSH authorized keys',
  docs: `
Reads the accounts with getent and id, changes them with useradd, usermod, userdel, groupadd,
groupdel and gpasswd (shadow-utils: Debian, Ubuntu, RHEL, SUSE, Arch). Every function compares
first and acts only on what differs: changed is true only when an account, a membership or a key
changed. In dry-run nothing changes: changed and would_change say whether it would, note says what.
Changing accounts needs root.`,
  functions: {
    present: {
      args: [
        user,
        {
          name: 'opts',
          type: '{uid?: integer, group?: string, groups?: string[], append?: boolean, shell?: string, home?: string, comment?: string, system?: boolean}',
          optional: true,
        },
      ],
      result: '{changed, name, created: boolean}',
      description: `Creates the user, or changes what differs from opts. groups are supplementary groups:
with append = true (the default) the user is added to them and kept in others; with append = false
its supplementary groups become exactly these.`,
      sideEffects: true,
      callsLua: false,
      example: `user.present("deploy", { shell = "/bin/bash", groups = { "www-data" } })`,
    },
    absent: {
      args: [user, { name: 'opts', type: '{remove_home?: boolean}', optional: true }],
      result: '{changed, name}',
      description: 'Removes the user if it exists (its home too with remove_home = true).',
      sideEffects: true,
      callsLua: false,
      example: `user.absent("olduser", { remove_home = true })`,
    },
    info: {
      args: [user],
      result: '{exists, uid?, gid?, home?, shell?, comment?, groups?: string[]}',
      description: 'The account as the system knows it; exists = false when there is none.',
      sideEffects: false,
      callsLua: false,
      example: `local u = user.info("deploy")
if u.exists then log.info("deploy's home", { home = u.home }) end`,
    },
    group_present: {
      args: [
        { name: 'group', type: 'string' },
        { name: 'opts', type: '{gid?: integer, system?: boolean}', optional: true },
      ],
      result: '{changed, name}',
      description: 'Creates the group if it does not exist (with that gid; changes a different gid).',
      sideEffects: true,
      callsLua: false,
      example: `user.group_present("app")`,
    },
    group_absent: {
      args: [{ name: 'group', type: 'string' }],
      result: '{changed, name}',
      description: 'Removes the group if it exists.',
      sideEffects: true,
      callsLua: false,
      example: `user.group_absent("old")`,
    },
    add_to_group: {
      args: [user, { name: 'group', type: 'string' }],
      result: '{changed}',
      description: 'Makes the user a member of the group, unless it is one.',
      sideEffects: true,
      callsLua: false,
      example: `user.add_to_group("deploy", "docker")`,
    },
    remove_from_group: {
      args: [user, { name: 'group', type: 'string' }],
      result: '{changed}',
      description: 'Removes the user from the group if it is a member (gpasswd -d).',
      sideEffects: true,
      callsLua: false,
      example: `user.remove_from_group("deploy", "docker")`,
    },
    authorized_key: {
      args: [
        user,
        { name: 'key', type: 'string' },
        { name: 'opts', type: '{state?: "present"|"absent"}', optional: true },
      ],
      result: '{changed, path}',
      description: `Adds the public key line to ~/.ssh/authorized_keys (state = "absent": removes it), creating
~/.ssh (0700) and the file (0600) owned by the user. A key counts as there when its type and
base64 match, whatever its comment.`,
      sideEffects: true,
      callsLua: false,
      example: `user.authorized_key("deploy", "ssh-ed25519 AAAAC3Nz... ci@example")`,
    },
  },
});
