import { defineLuaModule } from '@runner/plugin-sdk';

const format = 'format?: "tar"|"tar.gz"|"zip"';

/** Static declaration of the `archive` module: `runner modules info archive` prints it. */
export const archiveModule = defineLuaModule({
  name: 'archive',
  description: 'Create, extract and list tar, tar.gz and zip archives, idempotently and safely',
  docs: `
The format is opts.format, else (extract, list) the archive's first bytes, else its name: .tar,
.tar.gz or .tgz, .zip. Modes are kept both ways; owners are not (files belong to the runner's user).
Symlinks are archived as symlinks unless opts.follow_symlinks; a tar hard link is extracted as a copy.

What "changed" compares: the entries' names, types, modes, contents (size, then SHA-256) and link
targets; never times or owners, so an archive of files rewritten with the same bytes, or an
extraction over files holding them already, is changed = false and touches nothing.

Extraction is refused, naming the entry, for an entry that would land outside dest: an absolute
name, a ".." component, a symlink whose target resolves outside dest, an entry under a symlink (of
the archive or already in dest), a device or fifo. It is bounded by opts.max_bytes (unpacked bytes,
default 1 GiB) and opts.max_entries (default 100000): a bomb fails with an error saying which limit.
Entries are unpacked into a temporary directory (inside dest when dest exists, beside it when not)
and only when all were read and checked are they renamed into place, so a refusal or a limit leaves
dest as it was. Archives are written to a temporary file beside dest, then renamed over it.
In dry-run nothing is written: the archive is still read and checked (a refusal still raises) and
the result says what would change: { changed, would_change, skipped = true, note }.`,
  functions: {
    create: {
      args: [
        { name: 'dest', type: 'string' },
        { name: 'sources', type: 'string|string[]' },
        { name: 'opts', type: `{${format}, base?: string, follow_symlinks?: boolean}`, optional: true },
      ],
      result: '{changed, path, entries, ignored?: string[]}',
      description: `Archives the files and directories (recursively) of sources into dest. Entry names are relative
to each source's parent directory ("/srv/site" gives "site/..."), or to opts.base. changed is true
when dest did not hold an archive of exactly these entries (see above); then it is written anew.
Sockets and fifos are left out and listed in ignored. The archive itself is never archived.`,
      sideEffects: true,
      callsLua: false,
      example: `local r = archive.create("/var/backups/app.tar.gz", { "/etc/app", "/var/lib/app" })
if r.changed then log.info("backup updated", { entries = r.entries }) end`,
    },
    extract: {
      args: [
        { name: 'src', type: 'string' },
        { name: 'dest', type: 'string' },
        { name: 'opts', type: `{${format}, max_bytes?: integer, max_entries?: integer}`, optional: true },
      ],
      result: '{changed, path, entries, updated}',
      description: `Unpacks src into the directory dest (created if missing; its parent must exist). Only entries
differing from what dest holds are written (updated counts them); changed is true when any was.
Files dest has and the archive does not are left alone. Files take the archive's mode and mtime.`,
      sideEffects: true,
      callsLua: false,
      example: `local r = archive.extract("/tmp/tool-1.2.tar.gz", "/opt/tool", { max_bytes = 200 * 1024 * 1024 })
if r.changed then exec.run({ "systemctl", "restart", "tool" }) end`,
    },
    list: {
      args: [
        { name: 'src', type: 'string' },
        { name: 'opts', type: `{${format}, max_entries?: integer}`, optional: true },
      ],
      result: '{name, type, size, mode, mtime, link?}[]',
      description: `The entries of src in order, names as stored (unchecked: list extracts nothing). type is
"file", "directory", "symlink", "link" (a tar hard link) or a device type; mode is octal text
("0644"); mtime is seconds since the epoch; link is a link's target.`,
      sideEffects: false,
      callsLua: false,
      example: `for _, e in ipairs(archive.list("/tmp/tool-1.2.tar.gz")) do print(e.type, e.mode, e.name) end`,
    },
  },
});

export type ArchiveFunction = keyof typeof archiveModule.functions;
