/**
 * The research frame as the project stores it (meta row `project_briefing`, a JSON object). A field that was
 * never saved is absent (the briefing then falls back to `.marginalia/project.yaml`); an empty string or an
 * empty list is a saved, empty value.
 */
export interface StoredBriefing {
  description?: string;
  research_questions?: string[];
  methodology?: string;
  /** ISO 8601 UTC time of the last save */
  updated_at: string;
  /** the coder who saved it last */
  updated_by: string;
}

/** What is stored about the project as a whole: its totals, and the research frame (src/domain/memos.ts). */
export interface ProjectInfoRepository {
  /** The number of sources, codes, categories, text segments, AV segments and folders. */
  counts(): { sources: number; codes: number; categories: number; segments: number; av_segments: number; folders: number };
  /** The stored research frame, or undefined when none was ever saved (or the stored row is not a JSON object). */
  projectBriefing(): StoredBriefing | undefined;
  /** Stores the research frame (replacing the stored one). Runs inside the caller's transaction. */
  setProjectBriefing(briefing: StoredBriefing): void;
}
