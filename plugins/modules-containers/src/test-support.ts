import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A Docker daemon of the test's own (Debian's docker.io), on a socket in a temp directory, with no
 * bridge and no iptables rules: the tests' containers run with `--network none`, so nothing is
 * changed on the host's network. Null with the reason when one cannot run here (not root, no
 * dockerd, no static busybox to make an image from: no registry is reachable to pull one).
 */
export interface TestDaemon {
  env: Record<string, string>;
  /** A tiny image imported from busybox-static, made here. */
  image: string;
  stop(): Promise<void>;
}

export async function startDockerDaemon(): Promise<TestDaemon | string> {
  if (process.getuid?.() !== 0) return 'dockerd needs root';
  if (spawnSync('sh', ['-c', 'command -v dockerd && command -v docker']).status !== 0)
    return 'dockerd or docker is not installed (Debian docker.io)';
  if (
    !existsSync('/bin/busybox') ||
    !/statically/.test(spawnSync('file', ['/bin/busybox']).stdout?.toString() ?? 'statically')
  )
    return 'no static /bin/busybox (Debian busybox-static) to build the test image from';
  // Short: the daemon's sockets live under it and a unix socket path is limited to 108 bytes.
  const root = mkdtempSync('/tmp/rd-');
  const socket = join(root, 'docker.sock');
  const env = { DOCKER_HOST: `unix://${socket}` };
  const daemon: ChildProcess = spawn(
    'dockerd',
    [
      '--data-root',
      join(root, 'data'),
      '--exec-root',
      join(root, 'x'),
      '--pidfile',
      join(root, 'pid'),
      '-H',
      env.DOCKER_HOST,
      '--bridge=none',
      '--iptables=false',
      '--ip-masq=false',
    ],
    { stdio: 'ignore' },
  );
  const stop = async (): Promise<void> => {
    daemon.kill('SIGTERM');
    await new Promise<void>((resolve) => {
      if (daemon.exitCode !== null) resolve();
      daemon.once('exit', () => resolve());
      setTimeout(() => {
        daemon.kill('SIGKILL');
        resolve();
      }, 15_000).unref();
    });
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
  const image = 'runner-test/busybox:1';
  const rootfs = join(root, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  cpSync('/bin/busybox', join(rootfs, 'bin/busybox'));
  for (const applet of ['sh', 'echo', 'cat', 'sleep', 'ls', 'env', 'true'])
    symlinkSync('busybox', join(rootfs, 'bin', applet));
  const imported = spawnSync('sh', ['-c', `tar -C ${rootfs} -c . | docker import -c 'ENV PATH=/bin' - ${image}`], {
    env: { ...process.env, ...env },
  });
  if (imported.status !== 0) {
    await stop();
    return `could not import the test image: ${imported.stderr.toString()}`;
  }
  return { env, image, stop };
}
