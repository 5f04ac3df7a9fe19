/** Public surface of the record stage: raw → processed records, the failure codes and the token counting rule. */
export { effectiveError, FAILURE_CODES } from './failure.js';
export { type ProcessContext, processRecord } from './process.js';
export { countTokens, type TokenContext, type TokenCounts } from './tokens.js';
