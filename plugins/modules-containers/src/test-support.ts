import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineName } from './engine.js';

/**
 * A container engine of the test's own, on storage in a temp directory, that changes nothing on the
 * host's network: the tests' containers run with `--network none`. A string saying why when one
 * cannot run here (not root, not installed, no static busybox to make an image from: no registry is
 * reachable to pull one).
 */
export interface TestEngine {
  env: Record<string, string>;
  /** A tiny image imported from busybox-static, as the engine names it in its listings. */
  image: string;
  /** Why compose projects cannot be tested with this engine, or null when they can. */
  whyNoCompose: string | null;
  stop(): Promise<void>;
}

export function startTestEngine(engine: EngineName): Promise<TestEngine | string> {
  return engine === 'docker' ? startDockerDaemon() : startPodman();
}

const IMAGE = 'runner-test/busybox:1';

function installed(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
}

function whyNoTestImage(): string | null {
  if (
    !existsSync('/bin/busybox') ||
    !/statically/.test(spawnSync('file', ['/bin/busybox']).stdout?.toString() ?? 'statically')
  )
    return 'no static /bin/busybox (Debian busybox-static) to build the test image from';
  return null;
}

/** Imports IMAGE, a root filesystem of busybox alone, into the engine; the error when it cannot. */
function importTestImage(engine: EngineName, env: Record<string, string>, root: string): string | null {
  const rootfs = join(root, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  cpSync('/bin/busybox', join(rootfs, 'bin/busybox'));
  for (const applet of ['sh', 'echo', 'cat', 'sleep', 'ls', 'env', 'true'])
    symlinkSync('busybox', join(rootfs, 'bin', applet));
  const imported = spawnSync('sh', ['-c', `tar -C ${rootfs} -c . | ${engine} import -c 'ENV PATH=/bin' - ${IMAGE}`], {
    env: { ...process.env, ...env },
  });
  return imported.status === 0 ? null : `could not import the test image: ${imported.stderr.toString()}`;
}

/** Debian's docker.io, as root, on a socket in a temp directory, with no bridge and no iptables rules. */
async function startDockerDaemon(): Promise<TestEngine | string> {
  if (process.getuid?.() !== 0) return 'dockerd needs root';
  if (!installed('dockerd') || !installed('docker')) return 'dockerd or docker is not installed (Debian docker.io)';
  const noImage = whyNoTestImage();
  if (noImage) return noImage;
  // Short: the daemon's sockets live under it and a unix socket path is limited to 108 bytes.
  const root = mkdtempSync('/tmp/rd-');
  const env = { DOCKER_HOST: `unix://${join(root, 'docker.sock')}` };
  const daemon: ChildProcess = spawn(
    'dockerd',
    [
      ...['--data-root', join(root, 'data'), '--exec-root', join(root, 'x'), '--pidfile', join(root, 'pid')],
      ...['-H', env.DOCKER_HOST, '--bridge=none', '--iptables=false', '--ip-masq=false'],
    ],
    { stdio: 'ignore' },
  );
  const stop = async (): Promise<void> => {
    await stopProcess(daemon);
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
  const deadline = Date.now() + 60_000;
  while (spawnSync('docker', ['version'], { env: { ...process.env, ...env } }).status !== 0) {
    if (daemon.exitCode !== null || Date.now() > deadline) {
      await stop();
      return 'dockerd did not start here';
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const importError = importTestImage('docker', env, root);
  if (importError) {
    await stop();
    return importError;
  }
  const whyNoCompose =
    spawnSync('docker', ['compose', 'version']).status === 0 || installed('docker-compose')
      ? null
      : 'neither docker compose nor docker-compose is installed (Debian docker-compose)';
  return { env, image: IMAGE, whyNoCompose, stop };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve();
    child.once('exit', () => resolve());
    setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, 15_000).unref();
  });
}

/**
 * Debian's podman, rootful and daemonless, with its configuration and storage in a temp directory
 * (CONTAINERS_CONF and CONTAINERS_STORAGE_CONF replace the host's files, so the host's images and
 * containers are neither seen nor touched).
 */
async function startPodman(): Promise<TestEngine | string> {
  // Rootless podman needs subordinate ids and a user session; the test runs it as root only.
  if (process.getuid?.() !== 0) return 'the podman tests run rootful podman, which needs root';
  if (!installed('podman')) return 'podman is not installed (Debian podman)';
  const noImage = whyNoTestImage();
  if (noImage) return noImage;
  const root = mkdtempSync('/tmp/rp-');
  const env = writePodmanConfig(root);
  const podman = (args: string[]) => spawnSync('podman', args, { env: { ...process.env, ...env } });
  const stop = async (): Promise<void> => {
    podman(['rm', '--all', '--force', '--time', '0']);
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
  const failure = importTestImage('podman', env, root) ?? whyNoContainerRuns(podman);
  if (failure) {
    await stop();
    return failure;
  }
  // Podman names a local image with the registry `localhost/`, in listings too.
  return { env, image: `localhost/${IMAGE}`, whyNoCompose: whyNoPodmanCompose(), stop };
}

/** `podman info` passes where containers still cannot start (an rlimit refused, no runtime): running one tells. */
function whyNoContainerRuns(podman: (args: string[]) => SpawnSyncReturns<Buffer>): string | null {
  const probe = podman(['run', '--rm', '--network', 'none', IMAGE, 'true']);
  return probe.status === 0 ? null : `podman cannot run a container here: ${probe.stderr.toString().trim()}`;
}

function whyNoPodmanCompose(): string | null {
  if (!installed('podman-compose')) return 'podman-compose is not installed (Debian podman-compose)';
  const version = /version\s+(\d+)\.(\d+)\.(\d+)/.exec(spawnSync('podman-compose', ['version']).stdout.toString());
  const [major, minor, patch] = (version?.slice(1) ?? []).map(Number);
  // Before 1.0.6 it adds the project's network to every service even with `network_mode: none`, so
  // each container needs a bridge, which these tests do not create on the host.
  if (version && major === 1 && minor === 0 && patch < 6)
    return (
      `podman-compose ${version.slice(1).join('.')} puts a network_mode: none service on its project network ` +
      'too (podman: "cannot set multiple networks without bridge network mode"); these tests create no bridge'
    );
  return null;
}

/** The settings that let rootful podman run here, written under `root`; the environment that selects them. */
function writePodmanConfig(root: string): Record<string, string> {
  const containersConf = join(root, 'containers.conf');
  const storageConf = join(root, 'storage.conf');
  writeFileSync(
    containersConf,
    [
      '[containers]',
      'netns = "none"',
      // No journald here to read logs back from.
      'log_driver = "k8s-file"',
      // Rootful podman raises a container's nofile and nproc to 1048576 by default; without
      // CAP_SYS_RESOURCE (as here) runc then fails: "error setting rlimit type 7" (nofile), and
      // "type 6" (nproc) even at the host's own limit, conmon running under a lower one. Lowering
      // a limit needs no privilege.
      'default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]',
      '[engine]',
      // No systemd: cgroups are managed by hand and events go to a file.
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      `events_logfile_path = "${join(root, 'events.log')}"`,
      `tmp_dir = "${join(root, 'tmp')}"`,
      // `rm -f` waits this long after SIGTERM; docker's kills at once, which the shared cases expect.
      'stop_timeout = 0',
      '[network]',
      // Rootful netavark keeps its state in /run/containers/networks whatever is set; nothing
      // is written there since the tests' containers have no network.
      `network_config_dir = "${join(root, 'networks')}"`,
      '',
    ].join('\n'),
  );
  // vfs copies the 2 MB image per container but mounts nothing, so the temp directory simply goes.
  const storage = ['[storage]', 'driver = "vfs"', `graphroot = "${join(root, 'data')}"`];
  writeFileSync(storageConf, [...storage, `runroot = "${join(root, 'run')}"`, ''].join('\n'));
  return { CONTAINERS_CONF: containersConf, CONTAINERS_STORAGE_CONF: storageConf };
}
