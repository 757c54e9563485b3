import type { AnyTool } from './defineTool';
import { batchApplyCodes, createCodeTool, deleteSegmentTool, getCode, listCodes, listSegmentsForSource, updateSegmentMemoTool } from './coreTools';
import { closeProject, getProjectContext, openProject } from './projectTools';
import { addTextSource, importFileSource, listSources, navigateToSegment, readSourceContent, removeSource, suggestSourceMetadataTool } from './sourceTools';
import { createFolderTool, deleteFolderTool, listFolders, moveSourceToFolderTool, renameFolderTool } from './folderTools';
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
  deleteSegmentTool,
  batchApplyCodes,
  updateSegmentMemoTool,
  // project lifecycle
  getProjectContext,
  openProject,
  closeProject,
  // source management
  listSources,
  readSourceContent,
  navigateToSegment,
  suggestSourceMetadataTool,
  addTextSource,
  removeSource,
  importFileSource,
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
  moveCodeToCategoryTool,
  mergeCodesTool,
  deleteCodeTool,
  listCategories,
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
] as AnyTool[];

/** The tools by name. */
export const TOOLS_BY_NAME: ReadonlyMap<string, AnyTool> = new Map(TOOLS.map((t) => [t.name, t]));
