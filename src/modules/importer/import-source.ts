/**
 * What the importer and the compare gate read: the three sections of an import document, one
 * record at a time, whatever the file format. A section is read from its start each time it is
 * asked for, so the import can take plans, then customers, then subscriptions from one JSON file
 * without holding any of them in memory.
 */

export const SECTIONS = ['plans', 'customers', 'subscriptions'] as const;
export type Section = (typeof SECTIONS)[number];

/** The record kind a section holds, as reports name it. */
export const RECORD_KIND = { plans: 'plan', customers: 'customer', subscriptions: 'subscription' } as const;
export type RecordKind = (typeof RECORD_KIND)[Section];

export type SourceRow = {
  type: 'row';
  /** The record as the file states it: a JSON value, or a CSV row turned into the same shape. */
  value: unknown;
  /** Position in its section, from 0. */
  index: number;
  /** Line of the file where the record starts (1-based), when the source is a file. */
  line?: number;
};

/**
 * Something the reader could not turn into a record. `scope` says how far it reaches: one row (the
 * reader carries on), the section (the rest of it cannot be read), or the file (nothing after it can).
 */
export type SourceProblem = {
  type: 'problem';
  scope: 'row' | 'section' | 'file';
  message: string;
  line?: number;
  index?: number;
  /** The record's matching key, when the reader could still tell it. */
  key?: string;
};

export type SourceItem = SourceRow | SourceProblem;

export type SourceProgress = { bytes: number; totalBytes: number };

export interface ImportSource {
  /** Reads `section` from its start; `onProgress` hears how far into its file the reader is. */
  read(section: Section, onProgress?: (progress: SourceProgress) => void): AsyncIterable<SourceItem>;
  /** Bytes to read for `section` (0 when not a file): what a progress bar measures. */
  size(section: Section): number;
}

/** An import document already in memory (the body of `POST /v1/imports/compare`). */
export function documentSource(document: Partial<Record<Section, unknown[] | null | undefined>>): ImportSource {
  return {
    size: () => 0,
    async *read(section) {
      const rows = document[section] ?? [];
      for (let index = 0; index < rows.length; index++) yield { type: 'row', value: rows[index], index };
    },
  };
}
