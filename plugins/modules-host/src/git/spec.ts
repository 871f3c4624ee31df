import { defineLuaModule } from '@runner/plugin-sdk';

const dest = { name: 'dir', type: 'string' };
const headResult = '{changed, head, previous?}';

/** Static declaration of the `git` module: `runner modules info git` prints it. */
export const gitModule = defineLuaModule({
  name: 'git',
  description: 'Clone, pull, check out, tag and inspect git repositories',
  docs: `
Runs the git program of the host (never prompting: GIT_TERMINAL_PROMPT=0). changed is true when
HEAD moves (clone, pull, checkout) or a tag is made; head is the commit HEAD is at afterwards and
previous the one before when it moved. In dry-run nothing is fetched or changed: pull asks the
remote (git ls-remote) whether its branch is at HEAD; changed and would_change say whether it would
change, note says what.`,
  functions: {
    clone: {
      args: [
        { name: 'url', type: 'string' },
        dest,
        { name: 'opts', type: '{branch?: string, depth?: integer}', optional: true },
      ],
      result: headResult,
      description: 'Clones url into dir unless dir already holds a repository (then nothing changes).',
      sideEffects: true,
      callsLua: false,
      example: `git.clone("https://github.com/acme/app.git", "/srv/app", { branch = "main" })`,
    },
    pull: {
      args: [dest, { name: 'opts', type: '{remote?: string, branch?: string}', optional: true }],
      result: headResult,
      description:
        'Fetches and fast-forwards the checked-out branch (git pull --ff-only); raises when it cannot fast-forward.',
      sideEffects: true,
      callsLua: false,
      example: `if git.pull("/srv/app").changed then systemd.restart("app") end`,
    },
    checkout: {
      args: [dest, { name: 'ref', type: 'string' }],
      result: headResult,
      description: 'Checks out a branch, tag or commit; changed when HEAD moves to another commit.',
      sideEffects: true,
      callsLua: false,
      example: `git.checkout("/srv/app", "v1.4.2")`,
    },
    tag: {
      args: [
        dest,
        { name: 'name', type: 'string' },
        { name: 'opts', type: '{ref?: string, message?: string}', optional: true },
      ],
      result: '{changed, tag, commit}',
      description: 'Creates the tag at ref (default HEAD; annotated with message) unless it exists.',
      sideEffects: true,
      callsLua: false,
      example: `git.tag("/srv/app", "deployed-" .. os.date("%Y%m%d"))`,
    },
    status: {
      args: [dest],
      result: '{head, branch?, dirty: boolean, changes: string[]}',
      description: 'HEAD, the branch checked out (nil when detached), and the uncommitted changes (porcelain lines).',
      sideEffects: false,
      callsLua: false,
      example: `if git.status("/srv/app").dirty then log.warn("local edits on the server") end`,
    },
  },
});
