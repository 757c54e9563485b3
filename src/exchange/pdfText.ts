/**
 * Plain text of a PDF (ISO 32000) by Mozilla's `pdfjs-dist` (legacy build, pure JavaScript): loading pdf.js
 * once in this thread, the `DOMMatrix` stand-in it needs without a canvas package, and the page loop. Used by
 * textExtraction.ts (source import).
 */

/** The part of pdfjs-dist's API this module uses (its own typings are ESM-only declaration files). */
interface PdfjsModule {
  getDocument(params: Record<string, unknown>): {
    promise: Promise<{
      numPages: number;
      getPage(n: number): Promise<{
        getTextContent(): Promise<{ items: Array<{ str?: string; hasEOL?: boolean }> }>;
        cleanup(): void;
      }>;
    }>;
    destroy(): Promise<void>;
  };
}

let pdfjsPromise: Promise<PdfjsModule> | undefined;

/**
 * The 2-D subset of the Geometry Interfaces' `DOMMatrix` (W3C Geometry Interfaces Module Level 1) that pdf.js
 * touches outside rendering: its display module builds one at load time, and its worker maps Type3 bitmap
 * glyphs with `new DOMMatrix().scaleSelf(..).translateSelf(..)`. pdf.js takes `DOMMatrix` from the optional
 * native `@napi-rs/canvas` package when Node lacks it; this stand-in lets text extraction work without that
 * package (or inside a bundle, where pdf.js cannot `require` it). It is only installed on `globalThis` while
 * pdf.js is loading or extracting, and only when no `DOMMatrix` exists.
 */
class MiniDomMatrix {
  a = 1;
  b = 0;
  c = 0;
  d = 1;
  e = 0;
  f = 0;
  readonly is2D = true;

  constructor(init?: ArrayLike<number>) {
    if (init && init.length === 6) {
      const [a, b, c, d, e, f] = Array.from(init) as [number, number, number, number, number, number];
      Object.assign(this, { a, b, c, d, e, f });
    }
  }

  /** this = this x m (m given as a..f). */
  multiplySelf(m: { a: number; b: number; c: number; d: number; e: number; f: number }): this {
    const { a, b, c, d, e, f } = this;
    this.a = a * m.a + c * m.b;
    this.b = b * m.a + d * m.b;
    this.c = a * m.c + c * m.d;
    this.d = b * m.c + d * m.d;
    this.e = a * m.e + c * m.f + e;
    this.f = b * m.e + d * m.f + f;
    return this;
  }

  /** this = this x scale(sx, sy). */
  scaleSelf(sx = 1, sy = sx): this {
    return this.multiplySelf({ a: sx, b: 0, c: 0, d: sy, e: 0, f: 0 });
  }

  /** this = this x translate(tx, ty). */
  translateSelf(tx = 0, ty = 0): this {
    return this.multiplySelf({ a: 1, b: 0, c: 0, d: 1, e: tx, f: ty });
  }
}

/** How many loads/extractions currently rely on {@link MiniDomMatrix} being installed. */
let miniDomMatrixUsers = 0;

/** Runs `fn` with a `DOMMatrix` on `globalThis` (ours, if there is none), removing ours afterwards. */
async function withDomMatrix<T>(fn: () => Promise<T>): Promise<T> {
  const g = globalThis as { DOMMatrix?: unknown };
  const ours = miniDomMatrixUsers > 0 && g.DOMMatrix === MiniDomMatrix;
  if (!ours && g.DOMMatrix !== undefined) return fn();
  g.DOMMatrix = MiniDomMatrix;
  miniDomMatrixUsers++;
  try {
    return await fn();
  } finally {
    miniDomMatrixUsers--;
    if (miniDomMatrixUsers === 0 && g.DOMMatrix === MiniDomMatrix) delete g.DOMMatrix;
  }
}

/** pdf.js load-time warnings about its optional canvas package (rendering only; we never render). */
const PDFJS_CANVAS_WARNING = /^Warning: Cannot (load "@napi-rs\/canvas"|polyfill `|access the `require`)/;

/**
 * Loads pdfjs-dist's legacy (Node-compatible) build once. Its worker module is installed as
 * `globalThis.pdfjsWorker`, so pdf.js runs the worker code in this thread and never has to resolve the
 * worker file by URL (which also keeps it working when bundled). While it loads, its warnings about the
 * missing optional canvas package are not printed.
 */
function loadPdfjs(): Promise<PdfjsModule> {
  pdfjsPromise ??= withDomMatrix(async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]): void => {
      if (typeof args[0] === 'string' && PDFJS_CANVAS_WARNING.test(args[0])) return;
      warn.apply(console, args);
    };
    try {
      const g = globalThis as { pdfjsWorker?: unknown };
      if (!g.pdfjsWorker) {
        g.pdfjsWorker = await import('pdfjs-dist/legacy/build/pdf.worker.mjs' as string);
      }
      return (await import('pdfjs-dist/legacy/build/pdf.mjs' as string)) as PdfjsModule;
    } finally {
      if (console.warn !== warn) console.warn = warn;
    }
  });
  pdfjsPromise.catch(() => {
    pdfjsPromise = undefined;
  });
  return pdfjsPromise;
}

/**
 * Text of a PDF (ISO 32000) by pdf.js: for each page, its text items in content order, an item's `hasEOL`
 * giving a `"\n"`; trailing newlines of a page are dropped and pages are joined with `"\n\n"`.
 * A scanned PDF without a text layer yields empty pages (no OCR).
 *
 * @throws Error (from pdf.js) when the file is not a PDF, is damaged, or is password-protected.
 */
export async function pdfText(bytes: Uint8Array): Promise<string> {
  const pdfjs = await loadPdfjs();
  return withDomMatrix(() => pdfPages(pdfjs, bytes));
}

/** The page loop of {@link pdfText}. */
async function pdfPages(pdfjs: PdfjsModule, bytes: Uint8Array): Promise<string> {
  // pdf.js may transfer (detach) the buffer it is given, so hand it a copy.
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    const doc = await task.promise;
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (typeof item.str !== 'string') continue; // marked-content markers carry no text
        text += item.str;
        if (item.hasEOL) text += '\n';
      }
      pages.push(text.replace(/\n+$/, ''));
      page.cleanup();
    }
    return pages.join('\n\n');
  } finally {
    await task.destroy();
  }
}
