/**
 * THE table of import formats: `import_data`'s `format` -> the {@link Importer} that reads a file of that
 * format into an {@link ImportPlan} (plan.ts), writing nothing. The tool (src/tools/exchangeTools.ts) checks
 * the path, looks the format up here (a format not in the table fails with UNKNOWN_FORMAT), awaits
 * `plan(...)` in its asynchronous `prepare`, and writes the plan in its synchronous `run`, in one transaction.
 *
 * One entry per format, keyed by the format's name as `import_data` takes it (the HTTP spec's import formats,
 * plus Marginalia's). Adding a format is adding one line here.
 */
import type { Importer } from './plan';
import { refiQdaImporter } from '../refiQda/refiImport';
import { analyticsJsonImporter } from './analytics';
import { codeListImporter } from './codeList';
import { analyticsCsvImporter, csvImporter } from './csv';
import { qualcoderImporter } from './qualcoder';
import { rqdaImporter } from './rqda';
import { taguetteImporter } from './taguette';

export type { ImportOptions, ImportPlan, Importer } from './plan';

/** Every import format, by name. */
export const IMPORTERS: Record<string, Importer> = {
  refi_qda: refiQdaImporter,
  code_list: codeListImporter,
  csv: csvImporter,
  analytics_csv: analyticsCsvImporter,
  analytics_json: analyticsJsonImporter,
  rqda: rqdaImporter,
  qualcoder: qualcoderImporter,
  taguette: taguetteImporter,
};
