/**
 * AIPerf's sectioned config layout met by `-f`: AIPerf groups options in sections (the v2 envelope
 * `schemaVersion:` / `benchmark: {model, endpoint, dataset, phases, artifacts}` / `sweep:`, and the
 * older `endpoint:` / `input:` / `loadgen:` / `output:` sections), while tokenload's file is flat,
 * one key per flag. This tells the two apart; ./aiperf-config-layout.ts reads the sectioned one.
 */

function isSection(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The top-level key that makes `data` AIPerf's sectioned layout: `schemaVersion`, or a key whose
 * value is a section although tokenload's key of that name (if any) takes no object. Null when the
 * file is flat.
 */
export function aiperfSectionKey(
  data: Record<string, unknown>,
  takesObject: (key: string) => boolean,
): string | null {
  if ('schemaVersion' in data) return 'schemaVersion';
  for (const [key, value] of Object.entries(data)) if (isSection(value) && !takesObject(key)) return key;
  return null;
}
