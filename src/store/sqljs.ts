import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import type { SqlJsStatic } from 'sql.js';

let sqlPromise: Promise<SqlJsStatic> | undefined;

/**
 * Loads the sql.js WebAssembly module once per process. The wasm is looked up beside the bundle
 * (`dist/sql-wasm.wasm`, copied by esbuild.mjs) and otherwise in `node_modules/sql.js/dist`.
 */
export function loadSqlJs(): Promise<SqlJsStatic> {
  sqlPromise ??= initSqlJs({ wasmBinary: toArrayBuffer(fs.readFileSync(findWasm())) });
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
