/**
 * `stream_options` for streamed OpenAI-compatible requests (AIPerf reference, "What goes on the wire
 * for one Bailian turn"): `include_usage` is always set, `continuous_usage_stats` only for per-chunk
 * usage; keys the user already put there (through `--extra-inputs` or a turn's `extra`) are kept.
 */
export function streamOptionsFor(existing: unknown, perChunkUsage: boolean): Record<string, unknown> {
  const base =
    typeof existing === 'object' && existing !== null && !Array.isArray(existing)
      ? (existing as Record<string, unknown>)
      : {};
  const options: Record<string, unknown> = { ...base, include_usage: true };
  if (perChunkUsage) options.continuous_usage_stats = true;
  return options;
}
