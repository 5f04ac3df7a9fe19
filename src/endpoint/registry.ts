/**
 * The endpoint adapters by `--endpoint-type` name, as a typed `as const` map (no registration side
 * effects). CLI choices come from {@link EndpointTypeName}.
 */
import { chat } from './chat.js';
import { completions } from './completions.js';
import { chatEmbeddings, embeddings, nimEmbeddings } from './embeddings.js';
import { huggingfaceGenerate } from './hf-generate.js';
import { imageGeneration } from './image-generation.js';
import { messages } from './messages.js';
import { cohereRankings, hfTeiRankings, nimRankings } from './rankings.js';
import { responses } from './responses.js';
import { template } from './template.js';
import type { EndpointAdapter, EndpointOptions } from './types.js';

/** Every endpoint adapter, keyed by its `--endpoint-type` value. */
export const ENDPOINTS = {
  chat,
  completions,
  embeddings,
  responses,
  huggingface_generate: huggingfaceGenerate,
  messages,
  hf_tei_rankings: hfTeiRankings,
  cohere_rankings: cohereRankings,
  nim_rankings: nimRankings,
  chat_embeddings: chatEmbeddings,
  nim_embeddings: nimEmbeddings,
  image_generation: imageGeneration,
  template,
} as const;

/** An `--endpoint-type` value. */
export type EndpointTypeName = keyof typeof ENDPOINTS;

/** Every endpoint type name, in registry order. */
export const ENDPOINT_TYPES = Object.keys(ENDPOINTS) as EndpointTypeName[];

/** True when `name` is a known endpoint type. */
export function isEndpointTypeName(name: string): name is EndpointTypeName {
  return Object.hasOwn(ENDPOINTS, name);
}

/**
 * The adapter of endpoint type `name` for a run with `options`: the registry's own, or the one its
 * {@link EndpointAdapter.configure} builds from the options (the `template` type). The run, its
 * probes and the worker threads all get their adapter here.
 * @throws {ConfigError} as the type's `configure`.
 */
export function adapterFor(name: EndpointTypeName, options: EndpointOptions): EndpointAdapter {
  const adapter: EndpointAdapter = ENDPOINTS[name];
  return adapter.configure?.(options) ?? adapter;
}
