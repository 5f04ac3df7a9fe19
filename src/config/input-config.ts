/** The configuration as a run's summary records it (`input_config`), secrets redacted. */
import { optionFields, setAt, valueAt } from '../util/option-meta.js';
import { REDACTED } from '../util/redact.js';
import { ProfileFieldsSchema } from './fields.js';
import type { ProfileConfig } from './resolve.js';

/**
 * The configuration as the summary's `input_config` stores it: every option whose schema field is
 * marked secret (`--api-key`) replaced by `<redacted>`. The exporter then redacts secret-looking
 * keys and auth headers anywhere else (`--extra-inputs`, `-H`) by name.
 */
export function inputConfigOf(config: ProfileConfig): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(config);
  for (const field of SECRET_FIELDS) {
    if (valueAt(out, field.path) !== undefined) setAt(out, field.path, REDACTED);
  }
  return out;
}

const SECRET_FIELDS = optionFields(ProfileFieldsSchema).filter((f) => f.meta.secret === true);
