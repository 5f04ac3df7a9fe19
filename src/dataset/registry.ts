/**
 * Typed registry of trace loaders; `--custom-dataset-type` choices come from its keys.
 */
import { azureLoader } from './azure.js';
import { bailianLoader } from './bailian.js';
import { burstGptLoader } from './burstgpt.js';
import { inputsJsonLoader } from './inputs-json.js';
import { mooncakeLoader } from './mooncake.js';
import { multiTurnLoader } from './multi-turn.js';
import { randomPoolLoader } from './random-pool.js';
import { rawPayloadLoader } from './raw-payload.js';
import { singleTurnLoader } from './single-turn.js';
import type { DatasetLoader } from './types.js';

/** Every dataset type tokenload can load, by its `--custom-dataset-type` name. */
export const DATASET_LOADERS = {
  bailian_trace: bailianLoader,
  mooncake_trace: mooncakeLoader,
  azure_trace: azureLoader,
  burst_gpt_trace: burstGptLoader,
  single_turn: singleTurnLoader,
  multi_turn: multiTurnLoader,
  random_pool: randomPoolLoader,
  inputs_json: inputsJsonLoader,
  raw_payload: rawPayloadLoader,
} as const satisfies Record<string, DatasetLoader>;

/** A valid `--custom-dataset-type` name. */
export type DatasetTypeName = keyof typeof DATASET_LOADERS;

/** The dataset types whose rows are whole request bodies, sent as written (AIPerf's verbatim replay). */
export const VERBATIM_DATASET_TYPES: ReadonlySet<string> = new Set<DatasetTypeName>([
  'inputs_json',
  'raw_payload',
]);

/** The valid names, in registry order. */
export const DATASET_TYPE_NAMES = Object.keys(DATASET_LOADERS) as DatasetTypeName[];

/** Whether `name` is a registered dataset type. */
export function isDatasetTypeName(name: string): name is DatasetTypeName {
  return Object.hasOwn(DATASET_LOADERS, name);
}

/**
 * The loader registered under `name`.
 * @throws {Error} listing the valid names when `name` is unknown.
 */
export function getDatasetLoader(name: string): DatasetLoader {
  if (!isDatasetTypeName(name)) {
    throw new Error(`unknown dataset type "${name}"; valid types: ${DATASET_TYPE_NAMES.join(', ')}`);
  }
  return DATASET_LOADERS[name];
}
