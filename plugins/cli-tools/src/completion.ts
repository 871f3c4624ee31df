import type { CommandSpec } from '@runner/plugin-sdk';

/** Options every command accepts (commander adds them; the tree does not list them). */
const COMMON_OPTIONS = ['--help', '--version', '--data-dir', '--config', '--plugins-dir', '--debug'];

interface Node {
  /** Space-joined command path, '' for the root. */
  path: string;
  children: string[];
  options: string[];
  /** Fixed values of the first positional argument, if it has choices. */
  choices: string[];
  descriptions: Record<string, string>;
}

/** Flattens the tree into one entry per command path: what may follow it. */
export function completionNodes(commands: readonly CommandSpec[]): Node[] {
  const nodes: Node[] = [];
  const visit = (path: string, children: readonly CommandSpec[], spec?: CommandSpec): void => {
    const options = (spec?.options ?? []).flatMap((o) => o.flags.split(/[ ,|]+/).filter((f) => f.startsWith('-')));
    nodes.push({
      path,
      children: children.flatMap((c) => [c.name, ...(c.aliases ?? [])]),
      options: [...options, ...COMMON_OPTIONS],
      choices: spec?.arguments?.[0]?.choices ?? [],
      descriptions: Object.fromEntries(children.map((c) => [c.name, c.description])),
    });
    for (const child of children) visit(path ? `${path} ${child.name}` : child.name, child.subcommands ?? [], child);
  };
  visit('', commands);
  return nodes;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * bash: the function walks the words typed so far, keeping those that extend a known command
 * path, and offers what may follow that path.
 */
export function bashCompletion(commands: readonly CommandSpec[]): string {
  const nodes = completionNodes(commands);
  const cases = nodes
    .map((n) => `    ${quote(n.path)}) words=${quote([...n.children, ...n.choices, ...n.options].join(' '))} ;;`)
    .join('\n');
  const paths = nodes.map((n) => n.path).filter(Boolean);
  return `# runner completion for bash. Load with:  source <(runner completion bash)
_runner_known_path() {
  case "$1" in
${paths.map((p) => `    ${quote(p)}) return 0 ;;`).join('\n')}
  esac
  return 1
}
_runner() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" candidate w i words=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    if [[ -z "$path" ]]; then candidate="$w"; else candidate="$path $w"; fi
    _runner_known_path "$candidate" && path="$candidate"
  done
  case "$path" in
${cases}
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -F _runner runner
`;
}

/** zsh: the same walk, answering with compadd and descriptions. */
export function zshCompletion(commands: readonly CommandSpec[]): string {
  const nodes = completionNodes(commands);
  const cases = nodes
    .map((n) => {
      const described = n.children
        .map((c) => quote(`${c}:${(n.descriptions[c] ?? '').replace(/:/g, '\\:')}`))
        .join(' ');
      return `    ${quote(n.path)})\n      described=(${described})\n      plain=(${[...n.choices, ...n.options].map(quote).join(' ')}) ;;`;
    })
    .join('\n');
  const paths = nodes.map((n) => n.path).filter(Boolean);
  return `#compdef runner
# runner completion for zsh. Load with:  source <(runner completion zsh)
_runner() {
  local path="" candidate w i
  local -a described plain
  for ((i = 2; i < CURRENT; i++)); do
    w="\${words[i]}"
    [[ "$w" == -* ]] && continue
    if [[ -z "$path" ]]; then candidate="$w"; else candidate="$path $w"; fi
    case "$candidate" in
${paths.map((p) => `      ${quote(p)}) path="$candidate" ;;`).join('\n')}
    esac
  done
  case "$path" in
${cases}
  esac
  _describe -t commands 'runner command' described
  compadd -a plain
}
compdef _runner runner
`;
}

/** fish: one `complete` line per candidate, guarded by a function testing the typed path. */
export function fishCompletion(commands: readonly CommandSpec[]): string {
  const nodes = completionNodes(commands);
  const lines = [
    '# runner completion for fish. Load with:  runner completion fish | source',
    'function __runner_path',
    '    set -l path',
    '    set -l known ' +
      nodes
        .filter((n) => n.path)
        .map((n) => quote(n.path))
        .join(' '),
    '    for w in (commandline -opc)[2..-1]',
    "        string match -q -- '-*' $w; and continue",
    '        set -l candidate (string trim -- "$path $w")',
    '        contains -- $candidate $known; and set path $candidate',
    '    end',
    // Never empty: fish drops an empty command substitution, which would break `test`.
    '    echo -n "/$path"',
    'end',
    'function __runner_at',
    '    test (__runner_path) = "$argv[1]"',
    'end',
    'complete -c runner -f',
  ];
  for (const n of nodes) {
    const guard = `-n ${quote(`__runner_at ${quote(`/${n.path}`)}`)}`;
    for (const child of n.children) {
      lines.push(`complete -c runner ${guard} -a ${quote(child)} -d ${quote(n.descriptions[child] ?? '')}`);
    }
    for (const choice of n.choices) lines.push(`complete -c runner ${guard} -a ${quote(choice)}`);
    for (const option of n.options.filter((o) => o.startsWith('--'))) {
      lines.push(`complete -c runner ${guard} -l ${quote(option.slice(2))}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
