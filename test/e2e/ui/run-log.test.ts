// The run log's rows in Debian's chromium against a real master: a message holding newlines takes
// as many rows as it has lines and no longer overlaps the lines after it. Screenshots
// `run-log-multiline-*` in light and dark, desktop and phone.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { type Look, looks } from './browser.js';
import { runWorkflow } from './fleet.js';
import { uiSuite } from './suite.js';

// Pages of a master shared with other work on two cores: generous ceilings.
vi.setConfig({ testTimeout: 120_000 });

const ui = uiSuite({ timeoutMs: 120_000 });
let runId = '';

beforeAll(async () => {
  const content = [
    'version: "1.0"',
    'tasks:',
    '  - name: multi',
    '    exec:',
    '      script: |',
    '        log.info("before the block")',
    '        log.warn("first of three\\nsecond of three\\nthird of three")',
    '        log.info("after the block")',
  ].join('\n');
  runId = (await runWorkflow(ui.master, content, 'multi-line')).id;
}, 60_000);

describe('the run log', () => {
  it('gives a multi-line message its own rows, overlapping nothing, in both themes at both sizes', async () => {
    const { page, problems } = await ui.open(`/executions/${runId}`);
    const log = page.getByRole('log', { name: 'Log of the run' });
    const block = log.locator('.line').filter({ hasText: 'first of three' });
    const after = log.locator('.line').filter({ hasText: 'after the block' });
    await after.waitFor();
    expect(await block.textContent()).toContain('third of three');
    const notOverlapping = async ([theme, viewport]: Look) => {
      const blockBox = (await block.boundingBox())!;
      const afterBox = (await after.boundingBox())!;
      // Three text lines of 20 px, and the next log line starts below them.
      expect(blockBox.height, `${theme} ${viewport}`).toBeGreaterThanOrEqual(3 * 20 - 1);
      expect(afterBox.y, `${theme} ${viewport}`).toBeGreaterThanOrEqual(blockBox.y + blockBox.height - 1);
    };
    expect(await looks(page, 'run-log-multiline', { show: log, check: notOverlapping })).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
