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
} as const;

/** An `--endpoint-type` value. */
export type EndpointTypeName = keyof typeof ENDPOINTS;

/** Every endpoint type name, in registry order. */
export const ENDPOINT_TYPES = Object.keys(ENDPOINTS) as EndpointTypeName[];

/** True when `name` is a known endpoint type. */
export function isEndpointTypeName(name: string): name is EndpointTypeName {
  return Object.hasOwn(ENDPOINTS, name);
}
