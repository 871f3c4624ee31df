/**
 * The shell side of install and update: POSIX sh scripts run on the agent host over SSH, and the
 * parsing of what they print. Every value is single-quoted into the script; paths that also go
 * on a command line are restricted to characters that need no quoting.
 */

export const MIN_NODE = { major: 20, minor: 19 };

/** Single-quotes for POSIX sh. */
export function sq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Paths that are safe unquoted on any shell's command line. */
export const SAFE_PATH = /^\/[A-Za-z0-9._/+-]*$/;

export interface RemoteFacts {
  uid: number;
  user: string;
  home: string;
  os: string;
  arch: string;
  node?: string;
  nodeVersion?: string;
  tar?: string;
  gzip?: string;
  setsid?: string;
  systemctl?: string;
  pid1: string;
  systemdBooted: boolean;
  systemdUser: boolean;
  linger?: boolean;
  /** The install directory, resolved (`~` and the default expanded). */
  dir: string;
  /** The nearest existing ancestor of `dir` and whether this user may write there. */
  dirWritable: boolean;
  dirAncestor: string;
  freeKiB?: number;
  /** `<dir>/install.json` when an agent is installed there. */
  installed?: InstallRecord;
}

/** `<dir>/install.json` on the agent host. */
export interface InstallRecord {
  name: string;
  version: string;
  release: string;
  service: ServiceMode;
  unit?: string;
  node: string;
  master: string;
  installed_at: string;
  updated_at: string;
}

export type ServiceMode = 'systemd' | 'systemd-user' | 'nohup';

/** Prints `key=value` lines about the host; changes nothing. */
export function probeScript(name: string, remoteDir: string | undefined, nodePath: string | undefined): string {
  const dir =
    remoteDir === undefined
      ? `if [ "$(id -u)" = 0 ]; then DIR=/opt/runner-agent/${name}; else DIR="$HOME/.runner-agent/${name}"; fi`
      : remoteDir.startsWith('~/')
        ? `DIR="$HOME"/${sq(remoteDir.slice(2))}`
        : `DIR=${sq(remoteDir)}`;
  const node = nodePath === undefined ? 'NODE=$(command -v node 2>/dev/null || true)' : `NODE=${sq(nodePath)}`;
  return `
${dir}
${node}
echo "uid=$(id -u)"
echo "user=$(id -un)"
echo "home=$HOME"
echo "os=$(uname -s)"
echo "arch=$(uname -m)"
echo "node=$NODE"
if [ -n "$NODE" ] && [ -x "$NODE" ] && [ ! -d "$NODE" ]; then echo "node_version=$("$NODE" --version 2>/dev/null | head -n 1)"; fi
for tool in tar gzip setsid systemctl; do echo "$tool=$(command -v $tool 2>/dev/null || true)"; done
echo "pid1=$(cat /proc/1/comm 2>/dev/null || ps -p 1 -o comm= 2>/dev/null || echo unknown)"
if [ -d /run/systemd/system ]; then echo systemd_booted=yes; else echo systemd_booted=no; fi
if [ "$(id -u)" != 0 ] && [ -d /run/systemd/system ] && systemctl --user show-environment >/dev/null 2>&1; then echo systemd_user=yes; else echo systemd_user=no; fi
if command -v loginctl >/dev/null 2>&1; then echo "linger=$(loginctl show-user "$(id -un)" -p Linger --value 2>/dev/null)"; fi
echo "dir=$DIR"
ANCESTOR="$DIR"
while [ ! -e "$ANCESTOR" ] && [ "$ANCESTOR" != / ]; do ANCESTOR=$(dirname "$ANCESTOR"); done
echo "dir_ancestor=$ANCESTOR"
if [ -d "$ANCESTOR" ] && [ -w "$ANCESTOR" ]; then echo dir_writable=yes; else echo dir_writable=no; fi
echo "free_kib=$(df -Pk "$ANCESTOR" 2>/dev/null | awk 'NR==2 {print $4}')"
if [ -f "$DIR/install.json" ]; then echo "installed=$(tr -d '\\n' < "$DIR/install.json")"; fi
`;
}

export function parseFacts(stdout: string): RemoteFacts {
  const values = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  const get = (key: string) => (values.get(key) ? values.get(key) : undefined);
  let installed: InstallRecord | undefined;
  try {
    installed = get('installed') ? (JSON.parse(get('installed') as string) as InstallRecord) : undefined;
  } catch {
    installed = undefined;
  }
  const linger = get('linger');
  return {
    uid: Number(get('uid') ?? -1),
    user: get('user') ?? '?',
    home: get('home') ?? '',
    os: get('os') ?? 'unknown',
    arch: get('arch') ?? 'unknown',
    node: get('node'),
    nodeVersion: get('node_version'),
    tar: get('tar'),
    gzip: get('gzip'),
    setsid: get('setsid'),
    systemctl: get('systemctl'),
    pid1: get('pid1') ?? 'unknown',
    systemdBooted: get('systemd_booted') === 'yes',
    systemdUser: get('systemd_user') === 'yes',
    linger: linger === undefined ? undefined : linger === 'yes',
    dir: get('dir') ?? '',
    dirWritable: get('dir_writable') === 'yes',
    dirAncestor: get('dir_ancestor') ?? '',
    freeKiB: get('free_kib') === undefined ? undefined : Number(get('free_kib')),
    installed,
  };
}

/** `v20.19.1` → true for 20.19 and newer. */
export function nodeIsRecentEnough(version: string | undefined): boolean {
  const match = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > MIN_NODE.major || (major === MIN_NODE.major && minor >= MIN_NODE.minor);
}

/** What the host lacks for an agent, each item saying exactly what is missing; empty when fit. */
export function missingOnRemote(facts: RemoteFacts, nodePath: string | undefined, neededKiB: number): string[] {
  const missing: string[] = [];
  const want = `Node.js ${MIN_NODE.major}.${MIN_NODE.minor} or newer`;
  if (facts.os !== 'Linux')
    missing.push(`a Linux host (it runs ${facts.os}; install supports Linux with systemd or nohup)`);
  if (!facts.node) {
    missing.push(
      `${want}: no \`node\` on the PATH of ${facts.user} for non-interactive SSH sessions (install it from your distribution or nodejs.org, or give --node-path if it lives elsewhere, e.g. under nvm)`,
    );
  } else if (!facts.nodeVersion) {
    missing.push(`${want}: ${facts.node} ${nodePath ? '(--node-path) ' : ''}does not exist or does not run`);
  } else if (!nodeIsRecentEnough(facts.nodeVersion)) {
    missing.push(`${want}: found ${facts.nodeVersion} at ${facts.node}`);
  }
  if (!facts.tar) missing.push('tar (to unpack the upload)');
  if (!facts.gzip) missing.push('gzip (tar needs it to unpack the upload)');
  if (!facts.dirWritable) {
    missing.push(
      `write access for ${facts.user} to ${facts.dirAncestor} (to create ${facts.dir}): connect as root, or choose --remote-dir under ${facts.home || 'the home directory'}`,
    );
  } else if (facts.freeKiB !== undefined && Number.isFinite(facts.freeKiB) && facts.freeKiB < neededKiB) {
    missing.push(
      `free disk space: ${Math.ceil(neededKiB / 1024)} MiB needed in ${facts.dirAncestor}, ${Math.floor(facts.freeKiB / 1024)} MiB free`,
    );
  }
  return missing;
}

/** How the agent is kept running, and if not by systemd, why not. */
export function chooseService(facts: RemoteFacts, host: string): { mode: ServiceMode; note: string } {
  if (!facts.systemdBooted) {
    return {
      mode: 'nohup',
      note: `systemd is not running as PID 1 on ${host} (PID 1 is ${facts.pid1}), so no unit can be installed: the agent is started with nohup instead and is not restarted after a crash or a reboot`,
    };
  }
  if (!facts.systemctl) {
    return { mode: 'nohup', note: `systemctl is not on the PATH on ${host}: the agent is started with nohup instead` };
  }
  if (facts.uid === 0) return { mode: 'systemd', note: 'systemd unit' };
  if (facts.systemdUser) {
    return {
      mode: 'systemd-user',
      note:
        facts.linger === true
          ? `systemd user unit of ${facts.user}`
          : `systemd user unit of ${facts.user}; lingering is off, so it stops when ${facts.user}'s last session ends (as root: loginctl enable-linger ${facts.user})`,
    };
  }
  return {
    mode: 'nohup',
    note: `${facts.user} is not root and has no systemd user manager (systemctl --user does not answer): the agent is started with nohup instead and is not restarted after a crash or a reboot`,
  };
}

export function unitName(name: string): string {
  return `runner-agent-${name}.service`;
}

function unitFile(name: string, dir: string, mode: ServiceMode): string {
  return [
    '[Unit]',
    `Description=runner agent ${name}`,
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `WorkingDirectory=${dir}`,
    `ExecStart=/bin/sh ${dir}/run.sh`,
    // A stop asked through the master (exit 0) stays stopped; a crash is restarted.
    'Restart=on-failure',
    'RestartSec=2',
    'KillMode=mixed',
    'TimeoutStopSec=20',
    '',
    '[Install]',
    `WantedBy=${mode === 'systemd' ? 'multi-user.target' : 'default.target'}`,
    '',
  ].join('\n');
}

export interface ActivateOptions {
  name: string;
  dir: string;
  release: string;
  node: string;
  mode: ServiceMode;
  record: InstallRecord;
  /** Written to agent.env (mode 0600) when given; kept as it is otherwise (update). */
  env?: Record<string, string>;
  /** Text files written into the install directory (name to content), such as the master's certificate. */
  files?: Record<string, string>;
}

/**
 * Moves the unpacked release into place, writes agent.env, run.sh and install.json, points
 * `current` at the release, installs the unit (systemd modes), and (re)starts the agent. Prints
 * `pid=<n>` or `failed=<why>` and, when the agent died at once, the end of its log.
 */
export function activateScript(options: ActivateOptions): string {
  const { name, dir, release, node, mode } = options;
  for (const [file, content] of Object.entries(options.files ?? {})) {
    // The here-document would end early and run the rest of the file as shell commands.
    if (/^RUNNER_FILE_EOF$/m.test(content)) throw new Error(`${file} holds the line RUNNER_FILE_EOF`);
  }
  const unit = unitName(name);
  const unitDir = mode === 'systemd' ? '/etc/systemd/system' : '"$HOME/.config/systemd/user"';
  const ctl = mode === 'systemd' ? 'systemctl' : 'systemctl --user';
  const envFile = options.env
    ? Object.entries(options.env)
        .map(([k, v]) => `${k}=${sq(v)}`)
        .join('\n')
    : undefined;
  const runSh = [
    '#!/bin/sh',
    `# Written by runner agent install/update. Started by ${mode === 'nohup' ? 'nohup' : `systemd (${unit})`}.`,
    'set -a',
    `. ${dir}/agent.env`,
    'set +a',
    `echo $$ > ${dir}/agent.pid`,
    // The name is checked to need no quoting; master and token come from agent.env.
    `exec ${sq(node)} ${dir}/current/kernel/bin/runner.js agent start ${name}`,
    '',
  ].join('\n');
  const start =
    mode === 'nohup'
      ? `
stop_old
if command -v setsid >/dev/null 2>&1; then LAUNCH=setsid; else LAUNCH=; fi
# Detached from this session, with no descriptor of it left open, so the SSH channel can close.
$LAUNCH nohup /bin/sh ${dir}/run.sh >> ${dir}/agent.log 2>&1 < /dev/null &
`
      : `
stop_old
mkdir -p ${unitDir}
cat > ${unitDir}/${unit} <<'RUNNER_UNIT_EOF'
${unitFile(name, dir, mode)}RUNNER_UNIT_EOF
${ctl} daemon-reload
${ctl} enable ${unit} >/dev/null 2>&1 || echo "warning=could not enable ${unit}: it will not start at boot"
if ! ${ctl} restart ${unit}; then echo "failed=${ctl} restart ${unit} failed"; fi
`;
  const logTail =
    mode === 'nohup'
      ? `tail -n 30 ${dir}/agent.log 2>/dev/null`
      : `journalctl ${mode === 'systemd-user' ? '--user ' : ''}-u ${unit} -n 30 --no-pager 2>/dev/null || tail -n 30 ${dir}/agent.log 2>/dev/null`;
  const alive = mode === 'nohup' ? 'kill -0 "$PID" 2>/dev/null' : `${ctl} is-active --quiet ${unit}`;
  return `
set -u
DIR=${dir}
# This install's agent processes: those running runner.js from $DIR. A restart asked by the
# master respawns the agent as a new process, so agent.pid alone may be out of date.
agent_pids() {
  for p in /proc/[0-9]*; do
    pid=\${p#/proc/}
    [ "$pid" = "$$" ] && continue
    cmd=$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null) || continue
    case "$cmd" in *"$DIR/"*kernel/bin/runner.js*) echo "$pid" ;; esac
  done
}
stop_old() {
  OLD=$(agent_pids | tr '\n' ' ')
  if [ -n "$OLD" ]; then
    kill $OLD 2>/dev/null
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
      [ -z "$(agent_pids)" ] && break
      sleep 0.5
    done
    LEFT=$(agent_pids | tr '\n' ' ')
    [ -n "$LEFT" ] && kill -9 $LEFT 2>/dev/null
    echo "stopped_old=$OLD"
  fi
  rm -f "$DIR/agent.pid"
}
set -e
mv "$DIR/releases/${release}.partial" "$DIR/releases/${release}"
mkdir -p "$DIR/data"
${
  envFile === undefined
    ? ''
    : `(umask 077 && cat > "$DIR/agent.env.tmp" <<'RUNNER_ENV_EOF'
${envFile}
RUNNER_ENV_EOF
) && mv "$DIR/agent.env.tmp" "$DIR/agent.env"`
}
${Object.entries(options.files ?? {})
  .map(
    ([file, content]) => `cat > "$DIR/${file}.tmp" <<'RUNNER_FILE_EOF'
${content.endsWith('\n') ? content : `${content}\n`}RUNNER_FILE_EOF
mv "$DIR/${file}.tmp" "$DIR/${file}"`,
  )
  .join('\n')}
cat > "$DIR/run.sh.tmp" <<'RUNNER_RUN_EOF'
${runSh}RUNNER_RUN_EOF
chmod 755 "$DIR/run.sh.tmp" && mv "$DIR/run.sh.tmp" "$DIR/run.sh"
cat > "$DIR/install.json.tmp" <<'RUNNER_JSON_EOF'
${JSON.stringify(options.record)}
RUNNER_JSON_EOF
mv "$DIR/install.json.tmp" "$DIR/install.json"
ln -sfn "releases/${release}" "$DIR/current"
set +e
${start}
# Up for two seconds, or the end of its log.
PID=
for i in 1 2 3 4; do
  sleep 0.5
  [ -z "$PID" ] && [ -f "$DIR/agent.pid" ] && PID=$(cat "$DIR/agent.pid")
  if [ -n "$PID" ] && ! ${alive}; then break; fi
done
if [ -n "$PID" ] && ${alive}; then
  echo "pid=$PID"
else
  echo "failed=the agent exited right after it started"
  echo "---log---"
  ${logTail}
fi
# Keep the running release and the one before it.
cd "$DIR/releases" && ls -1 | grep -v '^${release}$' | sort -r | awk 'NR > 1' | while read -r old; do rm -rf "$DIR/releases/$old"; done
`;
}

/** Removes a release that did not finish unpacking. */
export function discardScript(dir: string, release: string): string {
  return `rm -rf ${dir}/releases/${release}.partial\n`;
}

/** Tries a TCP connection to the master from the agent host, with its Node. Prints `ok` or an error code. */
export function masterProbeScript(node: string, host: string, port: number): string {
  const js = `const s=require('net').connect({host:process.argv[1],port:Number(process.argv[2])});s.setTimeout(5000);s.on('connect',()=>{console.log('ok');process.exit(0)});s.on('timeout',()=>{console.log('ETIMEDOUT');process.exit(0)});s.on('error',e=>{console.log(e.code||e.message);process.exit(0)})`;
  return `${sq(node)} -e ${sq(js)} ${sq(host)} ${sq(String(port))}\n`;
}
