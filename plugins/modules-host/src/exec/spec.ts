import { defineLuaModule } from '@runner/plugin-sdk';

/** Static declaration of the `exec` module: `runner modules info exec` prints it. */
export const execModule = defineLuaModule({
  name: 'exec',
  description: 'Run commands and programs on the machine the task runs on',
  docs: `
A string command runs through /bin/sh -c (pipes, redirections and variables work); a list runs the
program with exactly those arguments and no shell, so nothing needs quoting. A string of plain
words naming its program by path ("/usr/bin/systemctl restart nginx") is started directly, which
means the same and saves the shell's start. The process runs in a
process group and session of its own, with no terminal: a timeout or a cancelled task kills the
whole group (SIGTERM, then SIGKILL after 2s), and a password prompt fails instead of hanging.
stdout and stderr are kept up to 10 MiB each (the rest is read and dropped, truncated = true) and
each line goes to the task's log at debug level as it arrives. Output is returned exactly as
written, trailing newline included. A background process that keeps the command's stdout open
(cmd &) makes exec.run wait for it: redirect its output (cmd >/dev/null 2>&1 &).`,
  functions: {
    run: {
      args: [
        { name: 'cmd', type: 'string|string[]' },
        { name: 'opts', type: '{cwd?: string, env?: table, timeout?: duration, stdin?: string}', optional: true },
      ],
      result: 'table',
      callsLua: false,
      description: `Runs cmd and returns { stdout, stderr, exit_code, success, duration } once it has ended.
Never raises because of the command's exit status: check success (exit_code == 0) or exit_code.
opts.cwd: working directory (an error if it does not exist). opts.env: variables merged over the
runner's environment (without the runner's own RUNNER_* variables, which hold credentials); a value
of false removes the variable. opts.timeout: "250ms", "5s", "2m" or a
number of seconds; when it passes the process group is killed and the result has timed_out = true,
success = false and exit_code nil with signal = "SIGTERM" (or the code the program chose on its way
out). opts.stdin: text written to the program's standard input (otherwise it reads /dev/null).
A program that does not exist gives exit_code 127 (126 when it cannot be executed) and a message in
stderr, as a shell would. When killed by a signal, exit_code is nil and signal names it.
Raises on bad arguments and when the task is cancelled while the command runs.
In dry-run nothing runs: { stdout = "", stderr = "", exit_code = 0, success = true, skipped = true,
note = "dry-run: would run: ..." }.`,
      sideEffects: true,
      example: `local r = exec.run("systemctl is-active nginx")
if not r.success then log.warn("nginx is down", { stderr = r.stderr }) end
local tar = exec.run({ "tar", "-czf", "/tmp/my backup.tgz", "/etc/app" }, { timeout = "2m" })
local up = exec.run("tr a-z A-Z", { stdin = "hello", env = { LC_ALL = "C" } })
assert(up.stdout == "HELLO")`,
    },
  },
});
