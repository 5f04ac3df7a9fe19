/** Public surface of the record stage: raw → processed records and the token counting rule. */
export { effectiveError, type ProcessContext, processRecord } from './process.js';
export { countTokens, type TokenContext, type TokenCounts } from './tokens.js';
