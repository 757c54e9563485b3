/**
 * The persistence ports the domain services use, one interface per aggregate under ./ports/, and
 * {@link ProjectRepository}, which is all of them. The store implements it over SQLite
 * (src/store/sqlRepository.ts, one module per aggregate under src/store/repository/).
 *
 * Contract of every method: writes run inside the caller's transaction (`ProjectStore.transaction`) and do not
 * validate: the domain service has checked that names are free, ids exist and ranges are valid, and a violated
 * constraint fails with SQLite's error. Reads of an unknown id give undefined (or an empty list). Text positions
 * count code points, AV positions are integer milliseconds, times are ISO 8601 UTC strings. Names compare through
 * `name_key` (`nameKey` of src/domain/rules.ts).
 */
import type { AgentAccessRepository } from './ports/agentAccess';
import type { ApprovalRepository } from './ports/approvals';
import type { CaseRepository } from './ports/cases';
import type { CodebookRepository } from './ports/codebook';
import type { CodingRepository } from './ports/codings';
import type { EventRepository } from './ports/events';
import type { ExchangeRepository } from './ports/exchange';
import type { FolderRepository } from './ports/folders';
import type { MergeConflictRepository } from './ports/mergeConflicts';
import type { ProjectInfoRepository } from './ports/project';
import type { ReportRepository } from './ports/reports';
import type { SearchRepository } from './ports/search';
import type { SourceRepository } from './ports/sources';
import type { SuggestionRepository } from './ports/suggestions';
import type { TeamRepository } from './ports/team';

export type * from './ports/agentAccess';
export type * from './ports/approvals';
export type * from './ports/cases';
export type * from './ports/codebook';
export type * from './ports/codings';
export type * from './ports/common';
export type * from './ports/events';
export type * from './ports/exchange';
export type * from './ports/folders';
export type * from './ports/mergeConflicts';
export type * from './ports/project';
export type * from './ports/reports';
export type * from './ports/search';
export type * from './ports/sources';
export type * from './ports/suggestions';
export type * from './ports/team';

/** The whole persistence port: every aggregate's repository. Domain services take it, or a `Pick` of what they use. */
export interface ProjectRepository
  extends
    CodebookRepository,
    SourceRepository,
    FolderRepository,
    CodingRepository,
    CaseRepository,
    SearchRepository,
    SuggestionRepository,
    ReportRepository,
    EventRepository,
    ApprovalRepository,
    ExchangeRepository,
    ProjectInfoRepository,
    AgentAccessRepository,
    TeamRepository,
    MergeConflictRepository {}
