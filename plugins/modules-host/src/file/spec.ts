import { defineLuaModule } from '@runner/plugin-sdk';

/** Static declaration of the `file` module: `runner modules info file` prints it. */
export const fileModule = defineLuaModule({
  name: 'file',
  description: 'Read, write, copy, render and edit files idempotently',
  docs: `
Every function that changes something returns { changed, path }: changed is true only when the file
system actually changed (writing the content a file already has gives changed = false), so a script
can report or react to real changes as Ansible does. Files are written atomically: a temporary file
in the same directory, fsynced, then renamed over the target, so readers see the old or the new
content and never half of it; a symlink is followed and its target replaced. A replaced file keeps
its mode (unless mode is given) and its owner (when the runner may set it).
Modes are strings of octal digits ("0644", "0755"): a Lua number such as 0644 is decimal and is
refused. Relative paths are relative to the runner's working directory. Content is text (UTF-8).
In dry-run, functions with side effects change nothing and return what they would have returned:
{ changed = <would change>, skipped = true, would_change = <same>, note = "dry-run: would ..." }, so
a later "when" on changed flows as in a real run; a missing directory or source
that an earlier (skipped) step would have created is mentioned in the note instead of raising.
Errors name the function, the path and the reason: "file.read: /etc/x: permission denied".`,
  functions: {
    read: {
      args: [{ name: 'path', type: 'string' }],
      result: 'string',
      callsLua: false,
      description: 'Returns the whole content of a file. Raises when it cannot be read.',
      sideEffects: false,
      example: `local conf = file.read("/etc/app/app.conf")`,
    },
    exists: {
      args: [{ name: 'path', type: 'string' }],
      result: 'boolean',
      callsLua: false,
      description: 'True when something exists at path (following symlinks: a dangling link is false).',
      sideEffects: false,
      example: `if not file.exists("/opt/app/bin/app") then error("app is not installed") end`,
    },
    stat: {
      args: [{ name: 'path', type: 'string' }],
      result: 'table',
      callsLua: false,
      description: `Describes path: { exists = true, path, type = "file"|"directory"|"symlink"|"other", size, mode = "0644",
uid, gid, mtime (seconds since the epoch), is_link, link_target (for a link) }. A symlink is
followed (type describes its target; "symlink" only when dangling). When nothing is there:
{ exists = false, path }, so st.exists is always safe to read.`,
      sideEffects: false,
      example: `local st = file.stat("/var/log/app.log")
if st.exists and st.size > 100 * 1024 * 1024 then log.warn("log is large", { bytes = st.size }) end`,
    },
    write: {
      args: [
        { name: 'path', type: 'string' },
        { name: 'content', type: 'string' },
        { name: 'opts', type: '{mode?: string}', optional: true },
      ],
      result: '{changed, path}',
      callsLua: false,
      description: `Makes the file hold exactly content, atomically; changed = false when it already did.
opts.mode sets the permissions (changing only the mode also counts as a change). The directory
must exist (see file.mkdir).`,
      sideEffects: true,
      example: `local r = file.write("/etc/app/port", tostring(values.port) .. "\\n", { mode = "0644" })
if r.changed then exec.run("systemctl restart app") end`,
    },
    copy: {
      args: [
        { name: 'src', type: 'string' },
        { name: 'dest', type: 'string' },
        { name: 'opts', type: '{mode?: string}', optional: true },
      ],
      result: '{changed, path}',
      callsLua: false,
      description: `Copies the regular file src to dest when their contents differ (atomically). When dest is a
directory the file goes inside it under its own name (path in the result says where). A new
file takes src's mode unless opts.mode is given; an existing one keeps its own. Directories are
not copied (use exec.run({"cp", "-a", src, dest})).`,
      sideEffects: true,
      example: `file.copy("files/nginx.conf", "/etc/nginx/nginx.conf", { mode = "0644" })`,
    },
    template: {
      args: [
        { name: 'src', type: 'string' },
        { name: 'dest', type: 'string' },
        { name: 'context', type: 'table', optional: true },
        { name: 'opts', type: '{mode?: string, syntax?: "jinja"|"go"}', optional: true },
      ],
      result: '{changed, path}',
      callsLua: false,
      description: `Renders the template file src with context (Jinja/nunjucks by default, or Go text/template
syntax) and writes the result to dest like file.write. The context is only the table you pass: give
it what the template reads, e.g. { vars = vars, values = values }. An unknown variable is an
error naming it and its line and column in src. Needs the template plugin.`,
      sideEffects: true,
      example: `file.template("templates/app.conf.j2", "/etc/app/app.conf",
  { vars = vars, port = values.port }, { mode = "0640" })`,
    },
    line_in_file: {
      args: [
        { name: 'path', type: 'string' },
        {
          name: 'line_or_opts',
          type: 'string|{line?, regexp?, state?, create?, insert_after?, insert_before?, mode?}',
        },
      ],
      result: '{changed, path}',
      callsLua: false,
      description: `Ensures one line is present in (or absent from) a text file, like Ansible's lineinfile.
state = "present" (default): with regexp, the last line matching it is replaced by line; when no
line matches (or without regexp) line is added unless the file already has it. It goes at the end,
or after the last line matching insert_after, or before the last line matching insert_before
("EOF" / "BOF" name the ends). state = "absent": removes every line matching regexp, or equal to
line; the result also has removed = <count>. regexp is a JavaScript regular expression (not a Lua
pattern). A missing file is an error unless create = true. The file's line endings (LF or CRLF)
are kept. A string as the second argument is the same as { line = <string> }.`,
      sideEffects: true,
      example: `file.line_in_file("/etc/ssh/sshd_config",
  { regexp = "^#?PermitRootLogin", line = "PermitRootLogin no" })
file.line_in_file("/etc/hosts", { line = "10.0.0.5 db", state = "absent" })`,
    },
    mkdir: {
      args: [
        { name: 'path', type: 'string' },
        { name: 'opts', type: '{mode?: string}', optional: true },
      ],
      result: '{changed, path}',
      callsLua: false,
      description: `Creates a directory and any missing parents (like mkdir -p). opts.mode is applied exactly
(not filtered by the umask) to path itself; parents get the default mode. An existing directory is
left alone (changed = false) unless its mode differs from opts.mode. Raises when path exists and
is not a directory.`,
      sideEffects: true,
      example: `file.mkdir("/opt/app/releases/" .. vars.version, { mode = "0755" })`,
    },
    remove: {
      args: [{ name: 'path', type: 'string' }],
      result: '{changed, path}',
      callsLua: false,
      description: `Removes a file, a symlink (not what it points to) or a whole directory tree. changed = false
when nothing was there. Refuses to remove /.`,
      sideEffects: true,
      example: `file.remove("/tmp/build-" .. workflow.run_id)`,
    },
  },
});

export type FileFunction = keyof typeof fileModule.functions;
