/**
 * Text exactly as stored, byte-order marks included.
 *
 * sql.js decodes every TEXT value it returns with one `TextDecoder` that its Emscripten runtime builds
 * once, when the module is instantiated (`new TextDecoder()` with the WHATWG Encoding Standard's
 * defaults). By default a TextDecoder *drops* one leading U+FEFF ("BOM sniffing"; Encoding Standard,
 * section 7.2, `ignoreBOM` false), so a stored text that begins with U+FEFF comes back one code point
 * shorter than SQLite's `length()`, and every position counted on the stored text moves by one. QualCoder
 * texts can begin with two U+FEFF and RQDA texts with one, so imported codings landed one or two
 * characters early, and Marginalia's own store lost the mark of any text that began with it.
 *
 * The fix is at the root: the sql.js module is instantiated while `globalThis.TextDecoder` is a subclass
 * that always sets `ignoreBOM: true` (the mark is then kept as a character), and the loader checks with a
 * round trip that the engine it got keeps the mark ({@link assertKeepsLeadingBom}). Nothing else in the
 * process sees the subclass: the global is restored before `withBomKeepingTextDecoder` returns.
 */

/**
 * Runs `init` with `globalThis.TextDecoder` replaced by a subclass whose instances keep a leading
 * byte-order mark (`ignoreBOM: true`, whatever the caller asked). `init` must construct its decoder
 * synchronously (sql.js's `initSqlJs` runs its Emscripten module body inside a Promise executor, which
 * is synchronous). Returns what `init` returns; the original global is restored even when `init` throws.
 */
export function withBomKeepingTextDecoder<T>(init: () => T): T {
  const Original = globalThis.TextDecoder;
  class BomKeepingTextDecoder extends Original {
    constructor(label?: string, options?: ConstructorParameters<typeof TextDecoder>[1]) {
      super(label, { ...options, ignoreBOM: true });
    }
  }
  globalThis.TextDecoder = BomKeepingTextDecoder;
  try {
    return init();
  } finally {
    globalThis.TextDecoder = Original;
  }
}

/** Two leading byte-order marks and a character: the probe {@link assertKeepsLeadingBom} round-trips. */
export const BOM_PROBE = '\uFEFF\uFEFFx';

/** The part of a sql.js module (`SqlJsStatic`) the probe uses, typed structurally so core needs no sql.js import. */
export interface SqlEngineLike {
  Database: new () => { exec(sql: string, params?: string[]): { values: unknown[][] }[]; close(): void };
}

/**
 * Checks that a sql.js module returns text with its leading byte-order marks: selects {@link BOM_PROBE}
 * through a fresh in-memory database and compares what comes back. Throws an Error naming what came back
 * when the marks were dropped (a sql.js build that builds its decoder lazily would defeat
 * {@link withBomKeepingTextDecoder}; failing loudly beats shifting every coding). Returns `SQL`.
 */
export function assertKeepsLeadingBom<S extends SqlEngineLike>(SQL: S): S {
  const db = new SQL.Database();
  let back: unknown;
  try {
    back = db.exec('SELECT ?', [BOM_PROBE])[0]?.values[0]?.[0];
  } finally {
    db.close();
  }
  if (back !== BOM_PROBE) {
    throw new Error(`sql.js does not return text exactly as stored: ${JSON.stringify(BOM_PROBE)} came back as ${JSON.stringify(back)}`);
  }
  return SQL;
}
