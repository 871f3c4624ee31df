// Generated from runner.proto by proto-loader-gen-types: do not edit; run `npm run generate -w @runner/proto`.
// Original file: runner.proto

export interface DescribeResponse {
  /**
   * The master's runner version.
   */
  version?: string;
  /**
   * The port of the REST API (`/api/v1`); 0 when this master serves none.
   */
  http_port?: number;
  /**
   * The address the REST API binds: 0.0.0.0 or :: for every interface, 127.0.0.1 for this host only.
   */
  http_bind_address?: string;
  /**
   * Whether the REST API serves HTTPS (`runner server --tls-cert`), with the certificate gRPC uses.
   */
  http_tls?: boolean;
}

export interface DescribeResponse__Output {
  /**
   * The master's runner version.
   */
  version: string;
  /**
   * The port of the REST API (`/api/v1`); 0 when this master serves none.
   */
  http_port: number;
  /**
   * The address the REST API binds: 0.0.0.0 or :: for every interface, 127.0.0.1 for this host only.
   */
  http_bind_address: string;
  /**
   * Whether the REST API serves HTTPS (`runner server --tls-cert`), with the certificate gRPC uses.
   */
  http_tls: boolean;
}
