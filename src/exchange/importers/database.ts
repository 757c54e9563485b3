import { withForeignDb, type ForeignDb } from '../sqlite';
import { checkImportFile, type Importer, type ImportOptions, type ImportPlan } from './plan';

/**
 * An importer of a foreign SQLite database (QualCoder, RQDA, Taguette): checks the file (checkImportFile), opens
 * it read-only as `what` (e.g. `a QualCoder project`, for messages; ../sqlite.ts) and reads it into a plan with
 * `read`. Errors: IMPORT_FAILED (missing or unreadable file, not an SQLite database, or `read`'s own).
 */
export function databaseImporter(
  entry: Omit<Importer, 'plan'> & { what: string },
  read: (db: ForeignDb, filePath: string, options: ImportOptions) => ImportPlan,
): Importer {
  const { what, ...importer } = entry;
  return {
    ...importer,
    plan: async (filePath, options) => {
      checkImportFile(filePath);
      return withForeignDb(filePath, what, (db) => read(db, filePath, options));
    },
  };
}
