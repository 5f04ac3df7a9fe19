/** Public surface of the export stage: one module per artifact plus the exporter registry. */

export { REDACTED, redactConfig } from '../util/redact.js';
export { type ArtifactPaths, type ConsoleContext, renderConsole } from './console-table.js';
export { INPUTS_FILE_NAME, INPUTS_SPOOL_FILE_NAME, InputsWriter } from './inputs-json.js';
export { type EpochConverter, formatRecordLine, RECORDS_FILE_NAME, RecordWriter } from './jsonl-writer.js';
export { RAW_RECORDS_FILE_NAME, RawRecordWriter } from './raw-writer.js';
export {
  EXPORTERS,
  type ExporterName,
  STREAM_WRITERS,
  TIMESLICE_EXPORTERS,
  writeSummaryFiles,
  writeTimesliceFiles,
} from './registry.js';
export { renderSummaryCsv, SUMMARY_CSV_FILE_NAME } from './summary-csv.js';
export {
  buildSummaryJson,
  type RunStatus,
  renderSummaryJson,
  SUMMARY_JSON_FILE_NAME,
  SUMMARY_SCHEMA_VERSION,
  type SummaryExportContext,
} from './summary-json.js';
export { renderTimeslicesCsv, TIMESLICES_CSV_FILE_NAME } from './timeslices-csv.js';
export {
  renderTimeslicesJson,
  TIMESLICES_JSON_FILE_NAME,
  type TimesliceExportContext,
} from './timeslices-json.js';
