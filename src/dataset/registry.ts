/**
 * Typed registry of trace loaders; `--custom-dataset-type` choices come from its keys.
 */
import { bailianLoader } from './bailian.js';
import { mooncakeLoader } from './mooncake.js';
import type { DatasetLoader } from './types.js';

/** Every dataset type tokenload can load, by its `--custom-dataset-type` name. */
export const DATASET_LOADERS = {
  bailian_trace: bailianLoader,
  mooncake_trace: mooncakeLoader,
} as const satisfies Record<string, DatasetLoader>;

/** A valid `--custom-dataset-type` name. */
export type DatasetTypeName = keyof typeof DATASET_LOADERS;

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
