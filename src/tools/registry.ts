import type { AnyTool } from './defineTool';
import { getApprovalStatusTool, listPendingApprovalsTool } from './approvalTools';
import { SESSION_TOOLS } from './sessionTools';
import { findSimilarSegmentsTool, searchCodesTool, searchSemanticTool, searchTextTool } from './searchTools';
import { applyAvCodeTool, detectSpeakersTool, listAvSegmentsTool, removeAvSegmentTool, suggestCodesForTranscriptTool, transcribeMediaTool } from './avTools';
import { batchApplyCodes, createCodeTool, deleteSegmentTool, getCode, listCodes, listSegmentsForSource, updateSegmentMemoTool } from './coreTools';
import { listSegmentsTool } from './segmentQueryTools';
import { retrieveSegmentsTool } from './retrievalTools';
import { closeProject, getProjectContext, openProject } from './projectTools';
import { addTextSource, importFileSource, listSources, navigateToSegment, readSourceContent, removeSource, suggestSourceMetadataTool } from './sourceTools';
import { setSourceAttributeTool } from './sourceAttributeTools';
import { eraseSourceTool } from './erasureTools';
import { getAgentAccessTool, setAgentAccessTool } from './agentAccessTools';
import { TEAM_TOOLS } from './teamTools';
import { MERGE_CONFLICT_TOOLS } from './mergeConflictTools';
import { REMOTE_TOOLS } from './remoteTools';
import { redoTool, undoAgentActionTool, undoTool } from './undoTools';
import { updateCaseMemoTool, updateProjectBriefingTool } from './memoTools';
import { deleteCategoryTool, renameCategoryTool, updateCategoryMemoTool } from './categoryTools';
import { createFolderTool, deleteFolderTool, listFolders, moveSourceToFolderTool, renameFolderTool } from './folderTools';
import { initializeVersionControlTool, listSnapshotsTool, restoreSnapshotTool, viewDiffTool } from './vcsTools';
import {
  applyCodeTool,
  deleteSourceTool,
  importSourceTool,
  importTextTool,
  moveCodeTool,
  removeCodeTool,
  renameSourceTool,
  updateMemoTool,
} from './capabilityTools';
import {
  exportReportTool,
  generateCoderComparisonTool,
  generateCooccurrenceReportTool,
  generateFrequencyReportTool,
  getReportTool,
  listReportsTool,
} from './reportTools';
import { importAnalyticsTool } from './analyticsTools';
import { exportDataTool, importDataTool, suggestExportFormatTool } from './exchangeTools';
import {
  createCategoryTool,
  deleteCodeTool,
  listCategories,
  mergeCodesTool,
  moveCodeToCategoryTool,
  renameCodeTool,
  setCodeColorTool,
  updateCodeMemoTool,
} from './codeTools';
import {
  addSegmentToCaseTool,
  addSourceToCaseTool,
  compareCasesTool,
  createCaseTool,
  deleteCaseTool,
  getCaseTool,
  listCasesTool,
  setCaseAttributeTool,
  suggestCaseGroupingsTool,
} from './caseTools';
import { listCaseAttributesTool, removeCaseAttributeTool, removeSourceFromCaseTool, renameCaseAttributeTool, renameCaseTool } from './caseManagementTools';

import {
  analyzeContentForCodes,
  analyzeUncodedText,
  autoSuggestCodesTool,
  detectDuplicateCodesTool,
  findSimilarContentTool,
  suggestBatchCodingTool,
  suggestCodesForRangeTool,
} from './rankedSuggestionTools';
import {
  approveBatchCoding,
  approveCodingSuggestionTool,
  approveMergeTool,
  approveSuggestionTool,
  getSuggestionBatchStatus,
  listPendingCodingSuggestions,
  listPendingSuggestions,
  rejectCodingSuggestionTool,
  respondToCodeSuggestion,
  suggestCodeApplication,
  suggestMergeCodesTool,
  suggestNewCodeTool,
} from './suggestionTools';

/**
 * THE list of tools. Every surface (HTTP, MCP, LM tools, WebSocket, gRPC, CLI, package.json) is derived
 * from it; no adapter names a tool.
 */
export const TOOLS: readonly AnyTool[] = [
  // core
  listCodes,
  getCode,
  createCodeTool,
  listSegmentsForSource,
  listSegmentsTool,
  // retrieval of coded passages with combined codes (src/tools/retrievalTools.ts; the Retrieval view)
  retrieveSegmentsTool,
  deleteSegmentTool,
  batchApplyCodes,
  updateSegmentMemoTool,
  // the agent-context design's coding capabilities (src/tools/capabilityTools.ts)
  applyCodeTool,
  removeCodeTool,
  // undo and redo of the researcher's own actions (src/tools/undoTools.ts; researcher only)
  undoTool,
  redoTool,
  // undo of an agent's action (issue 14 item 8; researcher only, every surface)
  undoAgentActionTool,
  // project lifecycle
  getProjectContext,
  openProject,
  closeProject,
  // the research frame of the briefing (src/tools/memoTools.ts; researcher only)
  updateProjectBriefingTool,
  // source management
  listSources,
  readSourceContent,
  navigateToSegment,
  suggestSourceMetadataTool,
  addTextSource,
  removeSource,
  eraseSourceTool,
  // sources closed to agents (src/tools/agentAccessTools.ts; set_agent_access is the researcher's)
  setAgentAccessTool,
  getAgentAccessTool,
  importFileSource,
  // document attributes (src/tools/sourceAttributeTools.ts)
  setSourceAttributeTool,
  // the agent-context design's source capabilities
  importSourceTool,
  importTextTool,
  renameSourceTool,
  deleteSourceTool,
  updateMemoTool,
  // folder management
  listFolders,
  createFolderTool,
  renameFolderTool,
  deleteFolderTool,
  moveSourceToFolderTool,
  // code management
  renameCodeTool,
  setCodeColorTool,
  updateCodeMemoTool,
  createCategoryTool,
  // category management (src/tools/categoryTools.ts)
  renameCategoryTool,
  updateCategoryMemoTool,
  deleteCategoryTool,
  moveCodeToCategoryTool,
  moveCodeTool,
  mergeCodesTool,
  deleteCodeTool,
  listCategories,
  // AI code suggestions (records proposals; approval applies them through the domain: src/domain/suggestions.ts)
  analyzeContentForCodes,
  suggestNewCodeTool,
  listPendingSuggestions,
  approveSuggestionTool,
  detectDuplicateCodesTool,
  suggestMergeCodesTool,
  approveMergeTool,
  // AI text coding
  suggestCodeApplication,
  listPendingCodingSuggestions,
  approveCodingSuggestionTool,
  rejectCodingSuggestionTool,
  analyzeUncodedText,
  suggestCodesForRangeTool,
  autoSuggestCodesTool,
  getSuggestionBatchStatus,
  respondToCodeSuggestion,
  approveBatchCoding,
  // batch operations
  findSimilarContentTool,
  suggestBatchCodingTool,
  // AV coding
  applyAvCodeTool,
  listAvSegmentsTool,
  removeAvSegmentTool,
  transcribeMediaTool,
  detectSpeakersTool,
  suggestCodesForTranscriptTool,
  // version control
  initializeVersionControlTool,
  listSnapshotsTool,
  viewDiffTool,
  restoreSnapshotTool,
  // conflicts of a merge of two histories (issue 16 item 4; src/tools/mergeConflictTools.ts)
  ...MERGE_CONFLICT_TOOLS,
  // the history's git remote (issue 16 item 2; src/tools/remoteTools.ts)
  ...REMOTE_TOOLS,
  // exchange
  suggestExportFormatTool,
  exportDataTool,
  importDataTool,
  importAnalyticsTool,
  // case management
  listCasesTool,
  getCaseTool,
  suggestCaseGroupingsTool,
  compareCasesTool,
  createCaseTool,
  deleteCaseTool,
  addSourceToCaseTool,
  addSegmentToCaseTool,
  setCaseAttributeTool,
  // managing cases from the workbench (src/tools/caseManagementTools.ts)
  renameCaseTool,
  removeSourceFromCaseTool,
  removeCaseAttributeTool,
  listCaseAttributesTool,
  renameCaseAttributeTool,
  // a case's memo (src/tools/memoTools.ts)
  updateCaseMemoTool,
  // reports (src/tools/reportTools.ts)
  generateFrequencyReportTool,
  generateCooccurrenceReportTool,
  generateCoderComparisonTool,
  getReportTool,
  listReportsTool,
  exportReportTool,
  // search
  searchTextTool,
  searchSemanticTool,
  searchCodesTool,
  findSimilarSegmentsTool,
  // approvals
  getApprovalStatusTool,
  listPendingApprovalsTool,
  // sessions (the researcher's: who is connected; issue 14 item 3)
  ...SESSION_TOOLS,
  // blind coding (issue 16 item 5; src/tools/teamTools.ts; setting it is the researcher's)
  ...TEAM_TOOLS,
] as AnyTool[];

/** The tools by name. */
export const TOOLS_BY_NAME: ReadonlyMap<string, AnyTool> = new Map(TOOLS.map((t) => [t.name, t]));
