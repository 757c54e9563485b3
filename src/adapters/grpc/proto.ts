/**
 * Loading the gRPC contract: where proto/marginalia.proto is (beside the bundle or in the repository), the
 * options it is loaded with, and the service definition of `marginalia.v1.Marginalia`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** The proto package and service (proto/marginalia.proto). */
export const GRPC_SERVICE = 'marginalia.v1.Marginalia';
/**
 * Where `proto/marginalia.proto` is: beside the bundle (`dist/cli.js`, `dist/extension.js` -> `../proto`)
 * or, when running from source (tests under tsx), three folders up from this file. The vsix ships
 * `proto/**` (.vscodeignore). Errors: a plain Error naming the places looked in.
 */
export function protoPath(): string {
  const candidates = [path.resolve(__dirname, '..', 'proto', 'marginalia.proto'), path.resolve(__dirname, '..', '..', '..', 'proto', 'marginalia.proto')];
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) throw new Error(`proto/marginalia.proto not found (looked in ${candidates.join(', ')})`);
  return found;
}

/**
 * The options Marginalia loads the proto with (clients should use the same): field names as written
 * (snake_case), 64-bit integers as JS numbers (sequence numbers stay below 2^53), enums as their names,
 * defaults filled in, and the name of the set member of each oneof (`message`) and proto3 optional
 * (`_since`).
 */
export const PROTO_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

/** Loads proto/marginalia.proto as a grpc-js package definition. Errors: as {@link protoPath}, or a parse error. */
export function loadMarginaliaProto(): grpc.GrpcObject {
  return grpc.loadPackageDefinition(protoLoader.loadSync(protoPath(), PROTO_OPTIONS));
}

/** The service definition of `marginalia.v1.Marginalia`. */
export function marginaliaService(): grpc.ServiceDefinition {
  const pkg = loadMarginaliaProto() as unknown as { marginalia: { v1: { Marginalia: grpc.ServiceClientConstructor } } };
  return pkg.marginalia.v1.Marginalia.service;
}
