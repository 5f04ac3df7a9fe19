/**
 * Public surface of the dataset stage: trace loaders, their registry, the JSONL reader and the
 * ideal prefix-cache analysis. Types shared with other stages live in `./types.js`.
 */
export { AZURE_BLOCK_SIZE, azureLoader, loadAzureTrace } from './azure.js';
export { BAILIAN_BLOCK_SIZE, bailianLoader, loadBailianTrace } from './bailian.js';
export { BURSTGPT_FAILED_MAX_TOKENS, burstGptLoader, loadBurstGptTrace } from './burstgpt.js';
export { type CsvCells, type CsvColumns, csvRowReader, splitCsvLine } from './csv-reader.js';
export { type JsonlReadOptions, type JsonlRow, LFS_POINTER_PREFIX, readJsonl } from './jsonl-reader.js';
export { loadMooncakeTrace, MOONCAKE_BLOCK_SIZE, mooncakeLoader } from './mooncake.js';
export { loadMultiTurn, multiTurnLoader } from './multi-turn.js';
export { idealPrefixHit, type PrefixHitStats, type PrefixRequest } from './prefix-analysis.js';
export { loadRandomPool, randomPoolLoader } from './random-pool.js';
export {
  DATASET_LOADERS,
  DATASET_TYPE_NAMES,
  type DatasetTypeName,
  getDatasetLoader,
  isDatasetTypeName,
} from './registry.js';
export {
  type ConversationSampler,
  createConversationSampler,
  defaultSamplingStrategy,
  isSamplingStrategy,
  SAMPLING_STRATEGIES,
  type SamplingStrategy,
  sampleConversationOrder,
} from './sampling.js';
export { loadSingleTurn, singleTurnLoader } from './single-turn.js';
export {
  generateSyntheticDataset,
  PREFIX_POOL_ID_BASE,
  SHARED_SYSTEM_ID_BASE,
  SYNTHETIC_SOURCE,
  USER_CONTEXT_ID_BASE,
} from './synthetic.js';
export {
  parseSeqDist,
  type SeqDistEntry,
  SYNTHETIC_DEFAULTS,
  type SyntheticDatasetOptions,
  SyntheticOptionError,
} from './synthetic-options.js';
export { parseTraceDatetime, type TraceInstant } from './trace-time.js';
export * from './types.js';
