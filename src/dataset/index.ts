/**
 * Public surface of the dataset stage: trace loaders, their registry, the JSONL reader and the
 * ideal prefix-cache analysis. Types shared with other stages live in `./types.js`.
 */
export { BAILIAN_BLOCK_SIZE, bailianLoader, loadBailianTrace } from './bailian.js';
export { type JsonlReadOptions, type JsonlRow, LFS_POINTER_PREFIX, readJsonl } from './jsonl-reader.js';
export { loadMooncakeTrace, MOONCAKE_BLOCK_SIZE, mooncakeLoader } from './mooncake.js';
export { idealPrefixHit, type PrefixHitStats, type PrefixRequest } from './prefix-analysis.js';
export {
  DATASET_LOADERS,
  DATASET_TYPE_NAMES,
  type DatasetTypeName,
  getDatasetLoader,
  isDatasetTypeName,
} from './registry.js';
export * from './types.js';
