/**
 * Progress of the import tools (import_data, import_analytics), in the {@link ToolProgress} shape: reading
 * the file in bytes ("Reading <format> file <name>"), then writing the plan in items ("Writing <format>
 * import"). Importers that stream (analytics_json) report bytes as they read; the others read at once, so
 * only the start and the end of their reading step are reported.
 */
import * as path from 'node:path';
import type { ImportProgress } from '../exchange/importers/plan';
import type { ToolContext, ToolProgress } from './context';
import type { PrepareContext } from './defineTool';

/**
 * The reading step's reporter for `file` of `size` bytes: `start()` reports 0 bytes, `onProgress` is the
 * importer's callback (its `read` reports pass through), `end()` reports the whole file.
 */
export function readingProgress(pctx: PrepareContext, format: string, file: string, size: number | null) {
  const message = `Reading ${format} file ${path.basename(file)}`;
  const report = (done: number, total: number | null) => pctx.progress?.({ message, done, total, unit: 'bytes' } satisfies ToolProgress);
  return {
    start: () => report(0, size),
    onProgress: (p: ImportProgress) => (p.phase === 'read' ? report(p.done, p.total ?? size) : undefined),
    end: () => report(size ?? 0, size ?? 0),
  };
}

/** The writing step's reporter: forwards applyImportPlan's `apply` reports as items written. */
export function writingProgress(ctx: ToolContext, format: string): (p: ImportProgress) => void {
  return (p) => ctx.progress?.({ message: `Writing ${format} import`, done: p.done, total: p.total, unit: 'items' });
}
