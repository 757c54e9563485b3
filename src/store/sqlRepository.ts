import type { ProjectRepository } from '../domain/ports';
import type { ProjectStore } from './projectStore';
import { SqlAgentAccessRepository } from './repository/agentAccess';
import { SqlApprovalRepository } from './repository/approvals';
import { SqlCaseRepository } from './repository/cases';
import { SqlCodebookRepository } from './repository/codebook';
import { SqlCodingRepository } from './repository/codings';
import { SqlEventRepository } from './repository/events';
import { SqlExchangeRepository } from './repository/exchange';
import { SqlFolderRepository } from './repository/folders';
import { SqlMergeConflictRepository } from './repository/mergeConflicts';
import { SqlProjectInfoRepository } from './repository/project';
import { SqlReportRepository } from './repository/reports';
import { SqlSearchRepository } from './repository/search';
import { SqlSourceRepository } from './repository/sources';
import { SqlSuggestionRepository } from './repository/suggestions';
import { SqlTeamRepository } from './repository/team';

/**
 * The aggregates' implementations (src/store/repository/), all over one store. A base class, so that they exist
 * before the fields of {@link SqlProjectRepository} that delegate to them are initialised.
 */
abstract class SqlAggregates {
  protected readonly codebook: SqlCodebookRepository;
  protected readonly sources: SqlSourceRepository;
  protected readonly folders: SqlFolderRepository;
  protected readonly codings: SqlCodingRepository;
  protected readonly cases: SqlCaseRepository;
  protected readonly search: SqlSearchRepository;
  protected readonly suggestions: SqlSuggestionRepository;
  protected readonly reports: SqlReportRepository;
  protected readonly events: SqlEventRepository;
  protected readonly approvals: SqlApprovalRepository;
  protected readonly exchange: SqlExchangeRepository;
  protected readonly project: SqlProjectInfoRepository;
  protected readonly agentAccess: SqlAgentAccessRepository;
  protected readonly team: SqlTeamRepository;
  protected readonly mergeConflicts: SqlMergeConflictRepository;

  protected constructor(store: ProjectStore) {
    this.exchange = new SqlExchangeRepository(store);
    this.codebook = new SqlCodebookRepository(store);
    this.sources = new SqlSourceRepository(store);
    this.folders = new SqlFolderRepository(store);
    this.codings = new SqlCodingRepository(store);
    this.cases = new SqlCaseRepository(store);
    this.search = new SqlSearchRepository(store);
    this.suggestions = new SqlSuggestionRepository(store);
    this.reports = new SqlReportRepository(store);
    this.events = new SqlEventRepository(store, this.exchange);
    this.approvals = new SqlApprovalRepository(store);
    this.project = new SqlProjectInfoRepository(store);
    this.agentAccess = new SqlAgentAccessRepository(store);
    this.team = new SqlTeamRepository(store);
    this.mergeConflicts = new SqlMergeConflictRepository(store);
  }
}

/**
 * {@link ProjectRepository} over a {@link ProjectStore}: plain SQL on the schema of migrations.ts, one class per
 * aggregate under src/store/repository/ (each implementing that aggregate's port of src/domain/ports/). Every
 * method is its aggregate's, bound to it, so it can be passed around on its own. Writes must run inside
 * `store.transaction`.
 */
export class SqlProjectRepository extends SqlAggregates implements ProjectRepository {
  constructor(store: ProjectStore) {
    super(store);
  }

  // CodebookRepository
  readonly listCodes = this.codebook.listCodes.bind(this.codebook);
  readonly getCode = this.codebook.getCode.bind(this.codebook);
  readonly findCodeByKey = this.codebook.findCodeByKey.bind(this.codebook);
  readonly insertCode = this.codebook.insertCode.bind(this.codebook);
  readonly updateCode = this.codebook.updateCode.bind(this.codebook);
  readonly deleteCode = this.codebook.deleteCode.bind(this.codebook);
  readonly listCodeLabels = this.codebook.listCodeLabels.bind(this.codebook);
  readonly codeColourCounts = this.codebook.codeColourCounts.bind(this.codebook);
  readonly codesWithColours = this.codebook.codesWithColours.bind(this.codebook);
  readonly listCategories = this.codebook.listCategories.bind(this.codebook);
  readonly getCategory = this.codebook.getCategory.bind(this.codebook);
  readonly findCategoryByKey = this.codebook.findCategoryByKey.bind(this.codebook);
  readonly insertCategory = this.codebook.insertCategory.bind(this.codebook);
  readonly updateCategory = this.codebook.updateCategory.bind(this.codebook);
  readonly deleteCategory = this.codebook.deleteCategory.bind(this.codebook);
  // SourceRepository
  readonly listSources = this.sources.listSources.bind(this.sources);
  readonly getSource = this.sources.getSource.bind(this.sources);
  readonly getSourceText = this.sources.getSourceText.bind(this.sources);
  readonly findSourceByName = this.sources.findSourceByName.bind(this.sources);
  readonly findSourceByPath = this.sources.findSourceByPath.bind(this.sources);
  readonly textSourceLengths = this.sources.textSourceLengths.bind(this.sources);
  readonly insertSource = this.sources.insertSource.bind(this.sources);
  readonly deleteSource = this.sources.deleteSource.bind(this.sources);
  readonly setSourceFolder = this.sources.setSourceFolder.bind(this.sources);
  readonly renameSource = this.sources.renameSource.bind(this.sources);
  readonly setSourceMemo = this.sources.setSourceMemo.bind(this.sources);
  readonly insertMetadataHint = this.sources.insertMetadataHint.bind(this.sources);
  readonly spliceSourceText = this.sources.spliceSourceText.bind(this.sources);
  readonly replaceSourceText = this.sources.replaceSourceText.bind(this.sources);
  readonly listSourceAttributes = this.sources.listSourceAttributes.bind(this.sources);
  readonly setSourceAttribute = this.sources.setSourceAttribute.bind(this.sources);
  readonly deleteSourceAttribute = this.sources.deleteSourceAttribute.bind(this.sources);
  // FolderRepository
  readonly listFolders = this.folders.listFolders.bind(this.folders);
  readonly getFolder = this.folders.getFolder.bind(this.folders);
  readonly findFolder = this.folders.findFolder.bind(this.folders);
  readonly insertFolder = this.folders.insertFolder.bind(this.folders);
  readonly renameFolder = this.folders.renameFolder.bind(this.folders);
  readonly deleteFolder = this.folders.deleteFolder.bind(this.folders);
  readonly folderContents = this.folders.folderContents.bind(this.folders);
  // CodingRepository
  readonly listSegmentsForSource = this.codings.listSegmentsForSource.bind(this.codings);
  readonly listSegmentMarksForSource = this.codings.listSegmentMarksForSource.bind(this.codings);
  readonly listSegmentsForCode = this.codings.listSegmentsForCode.bind(this.codings);
  readonly getSegment = this.codings.getSegment.bind(this.codings);
  readonly findSegment = this.codings.findSegment.bind(this.codings);
  readonly segmentsOverlapping = this.codings.segmentsOverlapping.bind(this.codings);
  readonly codingCodersOfCode = this.codings.codingCodersOfCode.bind(this.codings);
  readonly listCoders = this.codings.listCoders.bind(this.codings);
  readonly insertSegment = this.codings.insertSegment.bind(this.codings);
  readonly deleteSegment = this.codings.deleteSegment.bind(this.codings);
  readonly setSegmentMemo = this.codings.setSegmentMemo.bind(this.codings);
  readonly updateSegmentRange = this.codings.updateSegmentRange.bind(this.codings);
  readonly shiftSegments = this.codings.shiftSegments.bind(this.codings);
  readonly reassignSegments = this.codings.reassignSegments.bind(this.codings);
  readonly dedupeSegments = this.codings.dedupeSegments.bind(this.codings);
  readonly deleteSegmentsOfCode = this.codings.deleteSegmentsOfCode.bind(this.codings);
  readonly deleteSegmentsOfSource = this.codings.deleteSegmentsOfSource.bind(this.codings);
  readonly orphanSegment = this.codings.orphanSegment.bind(this.codings);
  readonly listOrphans = this.codings.listOrphans.bind(this.codings);
  readonly listAvSegmentsForSource = this.codings.listAvSegmentsForSource.bind(this.codings);
  readonly getAvSegment = this.codings.getAvSegment.bind(this.codings);
  readonly avSegmentsOverlapping = this.codings.avSegmentsOverlapping.bind(this.codings);
  readonly insertAvSegment = this.codings.insertAvSegment.bind(this.codings);
  readonly deleteAvSegment = this.codings.deleteAvSegment.bind(this.codings);
  // CaseRepository
  readonly listCases = this.cases.listCases.bind(this.cases);
  readonly getCase = this.cases.getCase.bind(this.cases);
  readonly findCaseByKey = this.cases.findCaseByKey.bind(this.cases);
  readonly insertCase = this.cases.insertCase.bind(this.cases);
  readonly touchCase = this.cases.touchCase.bind(this.cases);
  readonly renameCase = this.cases.renameCase.bind(this.cases);
  readonly updateCaseMemo = this.cases.updateCaseMemo.bind(this.cases);
  readonly deleteCase = this.cases.deleteCase.bind(this.cases);
  readonly listCaseSources = this.cases.listCaseSources.bind(this.cases);
  readonly insertCaseSource = this.cases.insertCaseSource.bind(this.cases);
  readonly deleteCaseSource = this.cases.deleteCaseSource.bind(this.cases);
  readonly listCaseSegments = this.cases.listCaseSegments.bind(this.cases);
  readonly listCaseSegmentsOfSource = this.cases.listCaseSegmentsOfSource.bind(this.cases);
  readonly getCaseSegment = this.cases.getCaseSegment.bind(this.cases);
  readonly findCaseSegment = this.cases.findCaseSegment.bind(this.cases);
  readonly insertCaseSegment = this.cases.insertCaseSegment.bind(this.cases);
  readonly updateCaseSegmentRange = this.cases.updateCaseSegmentRange.bind(this.cases);
  readonly deleteCaseSegment = this.cases.deleteCaseSegment.bind(this.cases);
  readonly listCaseAttributes = this.cases.listCaseAttributes.bind(this.cases);
  readonly setCaseAttribute = this.cases.setCaseAttribute.bind(this.cases);
  readonly deleteCaseAttribute = this.cases.deleteCaseAttribute.bind(this.cases);
  readonly listCaseCodings = this.cases.listCaseCodings.bind(this.cases);
  readonly caseExtents = this.cases.caseExtents.bind(this.cases);
  // SearchRepository
  readonly searchTokenize = this.search.searchTokenize.bind(this.search);
  readonly searchSourceHits = this.search.searchSourceHits.bind(this.search);
  readonly searchSourceOffsets = this.search.searchSourceOffsets.bind(this.search);
  readonly getSourceTextsForSearch = this.search.getSourceTextsForSearch.bind(this.search);
  readonly searchCodeRows = this.search.searchCodeRows.bind(this.search);
  readonly searchSegmentRows = this.search.searchSegmentRows.bind(this.search);
  readonly searchSegmentStats = this.search.searchSegmentStats.bind(this.search);
  readonly listSegmentsForSearch = this.search.listSegmentsForSearch.bind(this.search);
  readonly getSegmentsForSearch = this.search.getSegmentsForSearch.bind(this.search);
  readonly embeddedHashes = this.search.embeddedHashes.bind(this.search);
  readonly getEmbeddings = this.search.getEmbeddings.bind(this.search);
  readonly putEmbeddings = this.search.putEmbeddings.bind(this.search);
  // SuggestionRepository
  readonly insertSuggestion = this.suggestions.insertSuggestion.bind(this.suggestions);
  readonly getSuggestion = this.suggestions.getSuggestion.bind(this.suggestions);
  readonly listSuggestions = this.suggestions.listSuggestions.bind(this.suggestions);
  readonly findPendingSuggestion = this.suggestions.findPendingSuggestion.bind(this.suggestions);
  readonly decideSuggestion = this.suggestions.decideSuggestion.bind(this.suggestions);
  readonly insertSuggestionBatch = this.suggestions.insertSuggestionBatch.bind(this.suggestions);
  readonly getSuggestionBatch = this.suggestions.getSuggestionBatch.bind(this.suggestions);
  readonly respondToSuggestionBatch = this.suggestions.respondToSuggestionBatch.bind(this.suggestions);
  readonly touchSuggestionBatch = this.suggestions.touchSuggestionBatch.bind(this.suggestions);
  readonly insertSegmentProvenance = this.suggestions.insertSegmentProvenance.bind(this.suggestions);
  readonly getSegmentProvenance = this.suggestions.getSegmentProvenance.bind(this.suggestions);
  // ReportRepository
  readonly insertReport = this.reports.insertReport.bind(this.reports);
  readonly finishReport = this.reports.finishReport.bind(this.reports);
  readonly getReport = this.reports.getReport.bind(this.reports);
  readonly listReports = this.reports.listReports.bind(this.reports);
  readonly reportCodedRanges = this.reports.reportCodedRanges.bind(this.reports);
  readonly reportCodeSources = this.reports.reportCodeSources.bind(this.reports);
  // EventRepository
  readonly insertEvent = this.events.insertEvent.bind(this.events);
  readonly lastEventSeq = this.events.lastEventSeq.bind(this.events);
  readonly listEventsSince = this.events.listEventsSince.bind(this.events);
  readonly listEventsByCorrelation = this.events.listEventsByCorrelation.bind(this.events);
  readonly listUndoHistoryBefore = this.events.listUndoHistoryBefore.bind(this.events);
  readonly findSessionConnected = this.events.findSessionConnected.bind(this.events);
  // ApprovalRepository
  readonly insertApproval = this.approvals.insertApproval.bind(this.approvals);
  readonly getApproval = this.approvals.getApproval.bind(this.approvals);
  readonly listApprovals = this.approvals.listApprovals.bind(this.approvals);
  readonly decideApproval = this.approvals.decideApproval.bind(this.approvals);
  readonly entityVersions = this.approvals.entityVersions.bind(this.approvals);
  // ExchangeRepository
  readonly projectGuid = this.exchange.projectGuid.bind(this.exchange);
  readonly listExchangeGuids = this.exchange.listExchangeGuids.bind(this.exchange);
  readonly setExchangeGuid = this.exchange.setExchangeGuid.bind(this.exchange);
  readonly listEntityGuids = this.exchange.listEntityGuids.bind(this.exchange);
  // ProjectInfoRepository
  readonly counts = this.project.counts.bind(this.project);
  readonly projectBriefing = this.project.projectBriefing.bind(this.project);
  readonly setProjectBriefing = this.project.setProjectBriefing.bind(this.project);
  // AgentAccessRepository
  readonly listAgentAccess = this.agentAccess.listAgentAccess.bind(this.agentAccess);
  readonly setAgentAccess = this.agentAccess.setAgentAccess.bind(this.agentAccess);
  readonly listClosedSources = this.agentAccess.listClosedSources.bind(this.agentAccess);
  // TeamRepository
  readonly teamSettings = this.team.teamSettings.bind(this.team);
  readonly setTeamSettings = this.team.setTeamSettings.bind(this.team);
  readonly coderCodingCounts = this.team.coderCodingCounts.bind(this.team);
  readonly coderSegmentIds = this.team.coderSegmentIds.bind(this.team);
  // MergeConflictRepository
  readonly saveMergeConflicts = this.mergeConflicts.saveMergeConflicts.bind(this.mergeConflicts);
  readonly listMergeConflicts = this.mergeConflicts.listMergeConflicts.bind(this.mergeConflicts);
  readonly getMergeConflict = this.mergeConflicts.getMergeConflict.bind(this.mergeConflicts);
  readonly markMergeConflictResolved = this.mergeConflicts.markMergeConflictResolved.bind(this.mergeConflicts);
}
