// The loader of runner.proto, shared by the master and the agent. Plain JavaScript with types in
// index.d.ts: this package is not one of the TypeScript packages the build transpiles, and the
// generated types it re-exports are type-only.
import { fileURLToPath } from 'node:url';
import { credentials, loadPackageDefinition, Metadata, status } from '@grpc/grpc-js';
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
  if (!loaded) silenceIpServerNameWarning();
  loaded ??= loadPackageDefinition(loadSync(PROTO_FILE, { ...LOADER_OPTIONS }));
  return loaded;
}

/**
 * grpc-js passes the host of a TLS target as the TLS server name, and Node deprecates that for an
 * IP address (DEP0123) while still checking the certificate's IP entries. A master dialled as
 * 10.0.0.5:50053 is normal, so that one warning would reach the operator's terminal on every
 * connection without anything to act on. Only DEP0123 is held back; every other warning goes out.
 */
function silenceIpServerNameWarning() {
  const emit = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    const code = typeof rest[0] === 'object' && rest[0] !== null ? rest[0].code : rest[1];
    if (code === 'DEP0123') return;
    return emit.call(this, warning, ...rest);
  };
}

/**
 * Asks the master at `address` (`host:port` of its gRPC port) where its REST API is. Resolves
 * with the DescribeResponse, or rejects with an Error whose message says what went wrong in a
 * user's words (unreachable, no answer in time, not a runner master, TLS refused).
 */
export function describeMaster(address, options = {}) {
  const { Master } = loadRunnerProto().runner.v1;
  const tls = options.tls;
  const client = new Master(
    address,
    tls ? credentials.createSsl(tls.rootCert ?? null) : credentials.createInsecure(),
    tls?.serverName ? { 'grpc.ssl_target_name_override': tls.serverName } : {},
  );
  const deadline = new Date(Date.now() + (options.timeoutMs ?? 5000));
  return new Promise((resolve, reject) => {
    client.Describe({}, new Metadata(), { deadline }, (error, response) => {
      client.close();
      if (!error) return resolve(response);
      const reason =
        error.code === status.UNAVAILABLE
          ? `cannot reach it: ${unavailableReason(error.details)}`
          : error.code === status.DEADLINE_EXCEEDED
            ? 'no answer in time'
            : error.code === status.UNIMPLEMENTED
              ? 'it does not answer Describe (not a runner master, or one older than this runner)'
              : error.details || error.message;
      reject(new Error(`master ${address}: ${reason}`, { cause: error }));
    });
  });
}

/** grpc-js wraps the socket's error in a sentence of its own; the socket's error is what helps. */
function unavailableReason(details) {
  const last = /Last error: (?:Error: )?(.*?)(?: \(\d{4}-[^)]*\))?\.? Resolution note/.exec(details ?? '')?.[1];
  if (last === undefined) return details;
  // An HTTP/1 server (the REST API's port given instead of the gRPC one) breaks the HTTP/2 handshake.
  if (/^Protocol error/i.test(last)) return 'protocol error (is it the gRPC port? the REST API has a port of its own)';
  return last;
}
