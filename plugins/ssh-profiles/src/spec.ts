import { defineLuaModule } from '@runner/plugin-sdk';

/** Static declaration of the `ssh` module: `runner modules info ssh` prints it. */
export const sshModule = defineLuaModule({
  name: 'ssh',
  description: 'Commands and file copies on hosts of stored SSH profiles, from the master',
  docs: `
Connects by SSH profile (runner ssh add): the profile's credentials and pinned host key are used,
never shown, and every connection, command and copy is written to the profile's audit log with the
run as actor. A profile is usable here only when its workflows flag is on (an admin's choice), and
only once its host key is pinned (runner ssh test <name> --trust-host-key): a workflow never trusts
a key. In dry-run nothing connects: each function logs what it would do and returns changed = false.

Local paths (upload's source, download's destination) are confined to the working directory of
the script (relative paths, no "..", no symlink out of it): workflow code cannot copy the master's
own files (its keys, its store) to a host. Remote paths are as the remote user sees them.

In a master's local executor (engine.run_as) each call is performed by the master, which keeps the
credentials; the executor reads and writes the local files as its own user, in its working
directory (that user's home), at most 32 MiB a file.`,
  functions: {
    exec: {
      args: [
        { name: 'profile', type: 'string' },
        { name: 'cmd', type: 'string' },
        { name: 'opts', type: '{timeout?: number}', optional: true },
      ],
      result: '{code, stdout, stderr, changed}',
      callsLua: false,
      description:
        "Runs cmd through the remote user's shell and waits for it. code is the exit code (nil when a signal ended it); a non-zero code is returned, not raised. timeout in seconds (default 600).",
      sideEffects: true,
      example: `local r = ssh.exec("web-1", "systemctl is-active nginx")\nif r.code ~= 0 then error(r.stderr) end`,
    },
    upload: {
      args: [
        { name: 'profile', type: 'string' },
        { name: 'local', type: 'string' },
        { name: 'remote', type: 'string' },
        { name: 'opts', type: '{mode?: string}', optional: true },
      ],
      result: '{changed, bytes}',
      callsLua: false,
      description:
        'Copies a file under the working directory to remote over SFTP (mode 0600 unless opts.mode, e.g. "0644").',
      sideEffects: true,
      example: `ssh.upload("web-1", "build/app.tar.gz", "/tmp/app.tar.gz")`,
    },
    download: {
      args: [
        { name: 'profile', type: 'string' },
        { name: 'remote', type: 'string' },
        { name: 'local', type: 'string' },
      ],
      result: '{changed, bytes}',
      callsLua: false,
      description: 'Copies a remote file to a path under the working directory over SFTP (written 0600).',
      sideEffects: true,
      example: `ssh.download("web-1", "/var/log/nginx/error.log", "logs/web-1-error.log")`,
    },
  },
});
