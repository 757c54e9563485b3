import type { Database } from 'sql.js';
import { MIGRATIONS } from '../../src/store/migrations';
import { loadSqlJs } from '../../src/store/sqljs';

/**
 * A new in-memory sql.js database with the project schema as `ProjectStore.open` makes it: every migration in
 * version order, with the SQL functions a migration calls registered first (migration 11's derived GUIDs), each
 * recorded in `schema_migrations` at `appliedAt` (ISO 8601), and `PRAGMA user_version` at the latest version.
 * For benchmarks that write their projects row by row with sql.js directly. Throws what sql.js throws.
 */
export async function migratedDatabase(appliedAt = '2026-01-01T00:00:00.000Z'): Promise<Database> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database();
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
  for (const m of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
    for (const [name, fn] of Object.entries(m.functions ?? {})) db.create_function(name, fn);
    db.exec(m.sql);
    db.run('INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)', [m.version, appliedAt]);
  }
  db.exec(`PRAGMA user_version = ${Math.max(...MIGRATIONS.map((m) => m.version))}`);
  return db;
}
