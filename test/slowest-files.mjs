#!/usr/bin/env node
// Prints the slowest test files of a vitest run from its JSON report (`vitest run --reporter=json
// --outputFile.json=<file>`): where the suite's time goes, for .ci/run's last lines.
// Usage: node test/slowest-files.mjs <report.json> [count, default 20]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [file, countText = '20'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node test/slowest-files.mjs <vitest-report.json> [count]');
  process.exit(2);
}
const count = Number(countText);
if (!Number.isInteger(count) || count < 1) {
  console.error(`slowest-files: the count must be a positive integer, not ${JSON.stringify(countText)}`);
  process.exit(2);
}

const report = JSON.parse(readFileSync(file, 'utf8'));
if (!Array.isArray(report.testResults)) {
  console.error(`slowest-files: ${file} is not a vitest JSON report (no testResults array)`);
  process.exit(2);
}
const files = report.testResults
  .map((result) => ({
    name: relative(process.cwd(), result.name),
    seconds: (result.endTime - result.startTime) / 1000,
    tests: result.assertionResults?.length ?? 0,
    status: result.status,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const total = files.reduce((sum, f) => sum + f.seconds, 0);

console.log(
  `The ${Math.min(count, files.length)} slowest of ${files.length} test files (${total.toFixed(0)} s in all):`,
);
for (const f of files.slice(0, count)) {
  const status = f.status === 'passed' ? '' : `  ${f.status}`;
  console.log(`${f.seconds.toFixed(1).padStart(7)} s  ${String(f.tests).padStart(3)} tests  ${f.name}${status}`);
}
