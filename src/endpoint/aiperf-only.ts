/**
 * AIPerf's `--endpoint-type` values that tokenload does not take, each with the reason and the
 * nearest tokenload way, so `--endpoint-type video_generation` is refused with a sentence a user can
 * act on instead of a bare list of choices. The names are those of AIPerf's endpoint plugin registry
 * (`src/aiperf/plugin/plugins.yaml`, category `endpoint`, and the `--endpoint-type` choices of its
 * docs/cli-options.md) plus the example plugin type of its docs/plugins pages (`echo`).
 */

/** Why tokenload lacks one AIPerf endpoint type, and what to use instead. */
export interface MissingEndpointType {
  /** Why tokenload does not take it. */
  why: string;
  /** The nearest tokenload way to the same measurement. */
  instead: string;
}

const NO_MEDIA = 'tokenload sends JSON bodies built from text only (no image, audio or video inputs)';

/** AIPerf's endpoint types tokenload does not take, by name. */
export const AIPERF_ONLY_ENDPOINT_TYPES: Readonly<Record<string, MissingEndpointType>> = {
  video_generation: {
    why: 'it submits an asynchronous job (multipart form POST /v1/videos), then polls it until the video is ready, and tokenload measures single request/response exchanges only',
    instead: 'tokenload has no way to time a polled job: benchmark video servers with AIPerf itself',
  },
  image_edit: {
    why: `it uploads an input image as multipart/form-data, and ${NO_MEDIA}`,
    instead: 'for text-to-image use --endpoint-type image_generation',
  },
  audio_transcription: {
    why: `it uploads audio as multipart/form-data, and ${NO_MEDIA}`,
    instead: 'no tokenload way yet (planned after images)',
  },
  solido_rag: {
    why: "it speaks the Solido RAG pipeline's own API (/rag/api/prompt), which has no public specification",
    instead:
      "write that API's bodies to a file and replay them: --input-file bodies.jsonl --custom-dataset-type raw_payload --endpoint /rag/api/prompt",
  },
  raw: {
    why: 'tokenload has no endpoint type that sends bodies unformatted',
    instead:
      'replay the bodies as written with --input-file bodies.jsonl --custom-dataset-type raw_payload (and --endpoint for the path)',
  },
  image_retrieval: {
    why: `it sends images (URLs, files or data URLs) to a NIM /v1/infer service, and ${NO_MEDIA}`,
    instead: 'no tokenload way yet (planned with image inputs)',
  },
  echo: {
    why: "it is the example plugin of AIPerf's plugin guide, and tokenload loads no plugins: an endpoint type is a file of src/endpoint/ registered in src/endpoint/registry.ts",
    instead: 'for a custom body, replay it as written with --custom-dataset-type raw_payload',
  },
};

/**
 * The refusal of `name` as `--endpoint-type`, without the flag: `"<name> is AIPerf's endpoint type;
 * tokenload does not take it: <why>; <instead>."`, or undefined when AIPerf has no such type that
 * tokenload lacks.
 */
export function missingEndpointTypeMessage(name: string): string | undefined {
  if (!Object.hasOwn(AIPERF_ONLY_ENDPOINT_TYPES, name)) return undefined;
  const missing = AIPERF_ONLY_ENDPOINT_TYPES[name] as MissingEndpointType;
  return `${name} is AIPerf's endpoint type; tokenload does not take it: ${missing.why}; ${missing.instead}.`;
}
