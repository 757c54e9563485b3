import type { Migration } from './migrations/migration';
import { VERSIONS_1_TO_3 } from './migrations/versions1to3';
import { VERSIONS_4_TO_8 } from './migrations/versions4to8';
import { VERSIONS_9_TO_11 } from './migrations/versions9to11';
import { VERSIONS_13_TO_19 } from './migrations/versions13to19';

export type { Migration } from './migrations/migration';

/**
 * Every schema migration, grouped by version range under src/store/migrations/ (a new migration goes at the end
 * of the last group, or a new group once that one is long). The store runs them in version order, each once
 * (`PRAGMA user_version`); this list's own order is kept as written, since benchmarks hash it to name their
 * cached projects (bench/lib/generate.ts).
 */
export const MIGRATIONS: readonly Migration[] = [...VERSIONS_1_TO_3, ...VERSIONS_4_TO_8, ...VERSIONS_9_TO_11, ...VERSIONS_13_TO_19];

/** The schema version a fully migrated project has. */
export const LATEST_VERSION = Math.max(0, ...MIGRATIONS.map((m) => m.version));
