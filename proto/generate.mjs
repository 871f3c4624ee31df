// Generates the TypeScript types of runner.proto with proto-loader-gen-types (from
// @grpc/proto-loader) into generated/, formatted by the repository's prettier settings.
// `npm run generate -w @runner/proto` rewrites them; a test (plugins/agent-transport) generates into
// a temporary directory and compares, so the committed types cannot drift from the proto.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

const HEADER =
  '// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.\n';
// The generator writes an empty interface for an empty message (TaskAccepted, ...).
const EMPTY_MESSAGE_LINT =
  '/* eslint-disable @typescript-eslint/no-empty-object-type -- empty messages, as generated */\n';

/** Flags matching LOADER_OPTIONS in index.js. */
export const GEN_FLAGS = [
  '--grpcLib=@grpc/grpc-js',
  '--keepCase',
  '--longs=Number',
  '--enums=String',
  '--defaults',
  '--oneofs',
  '--includeComments',
  '--importFileExtension=.js',
];

function files(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files(path, out);
    else out.push(path);
  }
  return out;
}

/** Generates the files, by path relative to the output directory; writes them into `outDir` (emptied first) when given. */
export async function generate(outDir) {
  const bin = join(dirname(require.resolve('@grpc/proto-loader/package.json')), 'build/bin/proto-loader-gen-types.js');
  const raw = mkdtempSync(join(tmpdir(), 'runner-proto-gen-'));
  try {
    execFileSync(process.execPath, [bin, ...GEN_FLAGS, `--outDir=${raw}`, 'runner.proto'], {
      cwd: here,
      stdio: 'pipe',
    });
    const prettier = await import('prettier');
    const options = (await prettier.resolveConfig(join(here, 'generated', 'x.ts'))) ?? {};
    const result = new Map();
    for (const file of files(raw)) {
      const rel = relative(raw, file);
      const source = readFileSync(file, 'utf8');
      const header = HEADER + (/interface \w+ \{\s*\}/.test(source) ? EMPTY_MESSAGE_LINT : '');
      const text = await prettier.format(header + source, {
        ...options,
        filepath: join(here, 'generated', rel),
      });
      result.set(rel, text);
    }
    if (outDir) {
      rmSync(outDir, { recursive: true, force: true });
      for (const [rel, text] of result) {
        const target = join(outDir, rel);
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, text);
      }
    }
    return result;
  } finally {
    rmSync(raw, { recursive: true, force: true });
  }
}

/** The committed generated files, by relative path. */
export function committed() {
  const dir = join(here, 'generated');
  return new Map(files(dir).map((file) => [relative(dir, file), readFileSync(file, 'utf8')]));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await generate(join(here, 'generated'));
  console.log(`generated ${result.size} files in ${relative(process.cwd(), join(here, 'generated')) || '.'}`);
}
