import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inWorkflowDirs, MAX_WORKFLOW_BYTES, readWorkflowFile } from './workflow-files.js';

/** Real files, a real symlink and a real FIFO in a temp directory. */
const root = mkdtempSync(join(tmpdir(), 'runner-wf-files-'));
const dir = join(root, 'workflows');
const secret = join(root, 'secret.yaml');
mkdirSync(dir);
writeFileSync(join(dir, 'ok.yaml'), 'tasks: []\n');
writeFileSync(secret, 'password: hunter2\n');
symlinkSync(secret, join(dir, 'escape.yaml'));
symlinkSync(join(dir, 'ok.yaml'), join(dir, 'inner-link.yaml'));
execFileSync('mkfifo', [join(dir, 'fifo.yaml')]);
writeFileSync(join(dir, 'big.yaml'), Buffer.alloc(MAX_WORKFLOW_BYTES + 1, 'a'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function refusal(file: string, within?: string[]) {
  const error = (await readWorkflowFile(file, within).then(
    () => undefined,
    (e: unknown) => e,
  )) as { status: number; message: string } | undefined;
  expect(error, `${file} should be refused`).toBeDefined();
  expect(error?.message).not.toContain('hunter2');
  return error as { status: number; message: string };
}

describe('readWorkflowFile within workflow directories', () => {
  it('reads a file in the directory, by absolute path, relative path or a link staying inside', async () => {
    expect(await readWorkflowFile(join(dir, 'ok.yaml'), [dir])).toBe('tasks: []\n');
    expect(await readWorkflowFile('ok.yaml', [dir])).toBe('tasks: []\n');
    expect(await readWorkflowFile(join(dir, 'inner-link.yaml'), [dir])).toBe('tasks: []\n');
  });

  it('refuses files outside with 403 naming the setting, whether they exist or not', async () => {
    for (const file of [secret, '/etc/shadow', '/nonexistent/x.yaml', '../secret.yaml', join(dir, '../secret.yaml')]) {
      const error = await refusal(file, [dir]);
      expect(error.status).toBe(403);
      expect(error.message).toContain('engine.workflow_dirs');
    }
  });

  it('refuses a symlink that leaves the directory', async () => {
    const error = await refusal(join(dir, 'escape.yaml'), [dir]);
    expect(error.status).toBe(403);
  });

  it('refuses a FIFO, a device and an oversized file before reading them', async () => {
    const fifo = await refusal(join(dir, 'fifo.yaml'), [dir]);
    expect(fifo).toMatchObject({ status: 400 });
    expect(fifo.message).toContain('not a regular file');
    const device = await refusal('/dev/zero');
    expect(device.message).toBe('workflow file /dev/zero is not a regular file (a device, FIFO or socket)');
    const big = await refusal(join(dir, 'big.yaml'), [dir]);
    expect(big.status).toBe(413);
  });

  it('without directories (the CLI user reading their own file) any regular file is read', async () => {
    expect(await readWorkflowFile(secret)).toBe('password: hunter2\n');
    expect(await inWorkflowDirs(secret, [dir])).toBe(false);
    expect(await inWorkflowDirs(join(dir, 'ok.yaml'), [dir])).toBe(true);
  });
});
