// The loader of runner.proto, shared by the master and the agent. Plain JavaScript with types in
// index.d.ts: this package is not one of the TypeScript packages the build transpiles, and the
// generated types it re-exports are type-only.
import { fileURLToPath } from 'node:url';
import { loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

export const PROTO_FILE = fileURLToPath(new URL('./runner.proto', import.meta.url));

/** The revision of the protocol this copy speaks (Register.protocol_version). */
export const PROTOCOL_VERSION = 1;

// These must match the flags generate.mjs passes to proto-loader-gen-types, or the generated
// types would describe objects the loader does not produce.
export const LOADER_OPTIONS = Object.freeze({
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});

let loaded;

/** The runner.v1 package as grpc-js service constructors, parsed once per process. */
export function loadRunnerProto() {
  loaded ??= loadPackageDefinition(loadSync(PROTO_FILE, { ...LOADER_OPTIONS }));
  return loaded;
}
