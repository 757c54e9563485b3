import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import type { SqlJsStatic } from 'sql.js';
import { assertKeepsLeadingBom, withBomKeepingTextDecoder } from '../core/bomKeepingDecoder';

let sqlPromise: Promise<SqlJsStatic> | undefined;

/**
 * Loads the sql.js WebAssembly module once per process. The wasm is looked up beside the bundle
 * (`dist/sql-wasm.wasm`, copied by esbuild.mjs) and otherwise in `node_modules/sql.js/dist`.
 * The module decodes TEXT without dropping a leading U+FEFF (src/core/bomKeepingDecoder.ts); the promise
 * rejects when the engine would still drop it.
 */
export function loadSqlJs(): Promise<SqlJsStatic> {
  sqlPromise ??= withBomKeepingTextDecoder(() => initSqlJs({ wasmBinary: toArrayBuffer(fs.readFileSync(findWasm())) })).then(assertKeepsLeadingBom);
  return sqlPromise;
}

function toArrayBuffer(buf: Buffer): ArrayBuffer {
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
}

function findWasm(): string {
  const beside = path.join(__dirname, 'sql-wasm.wasm');
  if (fs.existsSync(beside)) return beside;
  // Built at run time so the bundler leaves it alone (the bundle finds the copy beside it first).
  return require.resolve(['sql.js', 'dist', 'sql-wasm.wasm'].join('/'));
}
