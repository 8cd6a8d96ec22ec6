/** The public face of the importer: what the command line (src/cli/import.ts) uses. */
export { runImport, type ImportOptions, type ImportProgress } from './run-import.js';
export { compareImport, PERIOD_END_TOLERANCE_MS, type CompareProgress } from './compare-import.js';
export { documentSource, SECTIONS, type ImportSource, type Section } from './import-source.js';
export { jsonFileSource } from './json-source.js';
export { csvFileSource } from './csv-source.js';
export type { CompareReport, ImportReport } from './importer.schemas.js';
export { compareBody, compareReportSchema } from './importer.schemas.js';
