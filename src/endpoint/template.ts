/**
 * The `template` endpoint type: a body of the user's own shape, written as a Jinja2 template, for an
 * API no other type speaks (AIPerf docs, tutorials/template-endpoint.md; AIPerf's `template`
 * endpoint plugin).
 * - `--extra-inputs payload_template:<t>`: the named template `nv-embedqa`
 *   (`{"text": {{ texts|tojson }}}`), a file holding the template, or the template text itself,
 *   tried in that order. It is rendered per request with the variables of {@link templateVariables}
 *   and must render a JSON object; the other `--extra-inputs`, then the turn's `extra`, are merged
 *   onto it (top-level keys replaced).
 * - `--extra-inputs response_field:<path>`: where each answer (or streamed event) holds its output:
 *   a field path of names, `.` and `[n]` indexes (`generated_text`, `data[0].embedding`), the part
 *   of JMESPath AIPerf's docs use; `text` or none: auto-detected ({@link detectOutput}). A value the
 *   path does not find (or finds empty) contributes nothing, as AIPerf's strict field.
 * - A text output counts output tokens; embeddings (a list of numbers, or of lists of numbers) and
 *   rankings (a list of objects) make the request answered with none (OSL 0).
 * - No default path (AIPerf's `endpoint_path: null`): requests go to the `--url` as given, or to
 *   `--endpoint` under it. Streams are read as SSE, each event's JSON parsed as above.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { asObject, emptyParse, inBandError } from './parse-common.js';
import { type BodyTemplate, compileBodyTemplate } from './template-jinja.js';
import type { BodyInput, EndpointAdapter, EndpointOptions, ParsedResponse } from './types.js';

/** The `--extra-inputs` key holding the template (AIPerf's name). */
export const PAYLOAD_TEMPLATE_KEY = 'payload_template';
/** The `--extra-inputs` key holding the answer's field path (AIPerf's name). */
export const RESPONSE_FIELD_KEY = 'response_field';

/** AIPerf's named templates, by name. */
export const NAMED_TEMPLATES: Readonly<Record<string, string>> = {
  'nv-embedqa': '{"text": {{ texts|tojson }}}',
};

/**
 * Template variables AIPerf passes that tokenload cannot fill: media (tokenload sends text only)
 * and AIPerf's own request objects. A template naming one is refused ({@link unsupportedVariables}).
 */
const UNSUPPORTED_VARIABLES = [
  'image',
  'images',
  'audio',
  'audios',
  'video',
  'videos',
  'images_by_name',
  'audios_by_name',
  'videos_by_name',
  'turn',
  'turns',
  'request_info',
] as const;

/** One step of a field path: a key, or an array index (negative from the end). */
type PathStep = string | number;

/**
 * `path` (`data[0].embedding`) as steps, or null when it is not a plain field path: names of
 * letters, digits and `_` joined by `.`, each followed by any `[n]` indexes (`[-1]`: the last).
 */
export function parseFieldPath(path: string): PathStep[] | null {
  const steps: PathStep[] = [];
  for (const part of path.split('.')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)?((?:\[-?\d+\])*)$/.exec(part);
    if (m === null || (m[1] === undefined && m[2] === '')) return null;
    if (m[1] !== undefined) steps.push(m[1]);
    for (const index of (m[2] ?? '').matchAll(/\[(-?\d+)\]/g)) steps.push(Number(index[1]));
  }
  return steps;
}

/** The value at `steps` in `json`, or undefined when a step is missing. */
function valueAt(json: unknown, steps: readonly PathStep[]): unknown {
  let value = json;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(value)) return undefined;
      value = value[step < 0 ? value.length + step : step];
    } else value = asObject(value)?.[step];
    if (value === undefined || value === null) return undefined;
  }
  return value;
}

/** The turn's texts: its named texts when its input file named them, else the last message's text(s). */
function textsOf(input: BodyInput): string[] {
  const named = input.namedTexts ?? [];
  if (named.length > 0) return named.flatMap((t) => t.contents);
  const content = input.messages[input.messages.length - 1]?.content ?? null;
  if (content === null) return [];
  if (typeof content === 'string') return [content];
  return content.map((part) => part.text);
}

/**
 * The variables a template sees for one request, as AIPerf names them: `text`/`texts` (the turn's
 * first / every text), `query`/`queries` (texts named `query`), `passage`/`passages` (named
 * `passages`, else `passage`), `texts_by_name`, `model`, `max_tokens` (null when no output length
 * is asked), `stream` (a boolean) and `role` (the turn's, `user` by default).
 */
export function templateVariables(input: BodyInput): Record<string, unknown> {
  const byName: Record<string, string[]> = {};
  for (const t of input.namedTexts ?? [])
    if (t.name !== '') byName[t.name] = [...(byName[t.name] ?? []), ...t.contents];
  const texts = textsOf(input);
  const queries = byName.query ?? [];
  const passages = byName.passages ?? byName.passage ?? [];
  return {
    text: texts[0] ?? null,
    texts,
    query: queries[0] ?? null,
    queries,
    passage: passages[0] ?? null,
    passages,
    texts_by_name: byName,
    model: input.model,
    max_tokens: input.maxTokens ?? null,
    stream: input.stream,
    role: input.messages[input.messages.length - 1]?.role ?? 'user',
  };
}

/**
 * The template text `value` names: a named template's text, else the text of the file at `value`
 * (relative to the working folder), else `value` itself.
 */
export function resolvePayloadTemplate(value: string): string {
  const named = NAMED_TEMPLATES[value];
  if (named !== undefined) return named;
  if (!value.includes('{') && existsSync(value) && statSync(value).isFile())
    return readFileSync(value, 'utf8');
  return value;
}

/**
 * The variables of {@link UNSUPPORTED_VARIABLES} that `source` names inside its `{{ }}` / `{% %}`
 * tags (a plain word match, string literals included).
 */
export function unsupportedVariables(source: string): string[] {
  const tags = [...source.matchAll(/\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}/g)].map((m) => m[1] ?? m[2] ?? '');
  const words = new Set(tags.flatMap((tag) => tag.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []));
  return UNSUPPORTED_VARIABLES.filter((name) => words.has(name));
}

/** A template run's settings, read from its `--extra-inputs`. */
interface TemplateSettings {
  /** The template text (a named template's or a file's, resolved). */
  source: string;
  template: BodyTemplate;
  /** The field path of `response_field`; null: auto-detection. */
  responseField: PathStep[] | null;
  /** The `--extra-inputs` merged onto each body (all but the two template keys). */
  extra: Record<string, unknown>;
}

/**
 * Reads and checks a run's template settings from its `--extra-inputs`.
 * @throws {ConfigError} when `payload_template` is missing or not a string, names no file nor
 *   template text (no `{`), names a variable
 *   tokenload cannot fill, does not parse, or `response_field` is not a field path.
 */
function templateSettings(extraInputs: Readonly<Record<string, unknown>>): TemplateSettings {
  const { [PAYLOAD_TEMPLATE_KEY]: given, [RESPONSE_FIELD_KEY]: field, ...extra } = extraInputs;
  const flag = '--extra-inputs';
  if (typeof given !== 'string' || given.trim() === '')
    throw new ConfigError(
      `--endpoint-type template needs ${flag} ${PAYLOAD_TEMPLATE_KEY}:<template>: the named template nv-embedqa, a template file, or the template text (docs/endpoints.md).`,
      flag,
    );
  const source = resolvePayloadTemplate(given);
  // A body is a JSON object, so a template text has a '{': without one the value named a file.
  if (!source.includes('{'))
    throw new ConfigError(
      `${flag} ${PAYLOAD_TEMPLATE_KEY}:${given}: no such file, and not a named template (nv-embedqa) nor a template text (a template renders a JSON object, so it has a '{'); give the template file's path as it is from this folder.`,
      flag,
    );
  const missing = unsupportedVariables(source);
  if (missing.length > 0)
    throw new ConfigError(
      `${flag} ${PAYLOAD_TEMPLATE_KEY}: the template uses ${missing.join(', ')}, which tokenload cannot fill: it sends text only (no image, audio or video inputs) and has no AIPerf turn or request_info objects; write the template with text, texts, query, queries, passage, passages, texts_by_name, model, max_tokens, stream and role.`,
      flag,
    );
  let template: BodyTemplate;
  try {
    template = compileBodyTemplate(source);
  } catch (err) {
    throw new ConfigError(
      `${flag} ${PAYLOAD_TEMPLATE_KEY}: the template does not parse: ${(err as Error).message}`,
      flag,
    );
  }
  return { source, template, responseField: responseFieldOf(field), extra };
}

/** `response_field` as a field path; null for none or `text` (auto-detection, as AIPerf). */
function responseFieldOf(field: unknown): PathStep[] | null {
  if (field === undefined || field === 'text') return null;
  const steps = typeof field === 'string' ? parseFieldPath(field) : null;
  if (steps === null)
    throw new ConfigError(
      `--extra-inputs ${RESPONSE_FIELD_KEY}:${String(field)}: tokenload reads a field path of names, '.' and [n] indexes (data[0].embedding, generated_text), the part of JMESPath AIPerf's docs use; leave it out for auto-detection.`,
      '--extra-inputs',
    );
  return steps;
}

/**
 * Renders one body: the template with the request's variables, parsed as a JSON object, then the
 * other `--extra-inputs` and the turn's `extra` merged onto it.
 * @throws {Error} when the render fails or is not a JSON object (the request is then a client error).
 */
function renderBody(settings: TemplateSettings, input: BodyInput): Record<string, unknown> {
  const rendered = settings.template.render(templateVariables(input));
  let body: unknown;
  try {
    body = JSON.parse(rendered);
  } catch (err) {
    throw new Error(
      `the payload template did not render JSON (${(err as Error).message}): ${rendered.slice(0, 200)}`,
    );
  }
  const object = asObject(body);
  if (object === null)
    throw new Error(`the payload template rendered ${rendered.slice(0, 100)}, not a JSON object`);
  Object.assign(object, settings.extra);
  if (input.turnExtra !== undefined) Object.assign(object, input.turnExtra);
  return object;
}

const isNumber = (v: unknown): boolean => typeof v === 'number';

/** True when `value` is an answer's output as AIPerf converts one: a non-empty text, embedding(s) or rankings. */
function applyOutput(parsed: ParsedResponse, value: unknown): void {
  if (typeof value === 'string') {
    parsed.text = value;
    return;
  }
  if (!Array.isArray(value) || value.length === 0) return;
  const first: unknown = value[0];
  const embeddings = isNumber(first) || (Array.isArray(first) && first.length > 0 && isNumber(first[0]));
  if (embeddings || asObject(first) !== null) parsed.nonTokenContent = true;
}

/** The text of a `text`-like field: a string, or a list of strings joined (AIPerf). */
function textField(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string'))
    return value.join('');
  return undefined;
}

/**
 * An answer's output when no `response_field` is given, tried in AIPerf's order: embeddings
 * (`data[].embedding` of `object: "embedding"` items, `embeddings`, `embedding`), rankings
 * (`rankings`, `results`), then text (`text`, `content`, `response`, `output`, `result`, then
 * `choices[0]`'s `text`, `message.content`, `delta.content`). A JSON value that is not an object
 * is taken as the output itself.
 */
export function detectOutput(json: unknown): unknown {
  const body = asObject(json);
  if (body === null) return json;
  const data = body.data;
  if (Array.isArray(data) && asObject(data[0])?.object === 'embedding') {
    const vectors = data.map((d) => asObject(d)?.embedding).filter((e) => e !== undefined);
    if (vectors.length > 0) return vectors;
  }
  for (const key of ['embeddings', 'embedding', 'rankings', 'results']) {
    const value = body[key];
    if (Array.isArray(value) && (value.length > 0 || key === 'rankings' || key === 'results')) return value;
  }
  for (const key of ['text', 'content', 'response', 'output', 'result']) {
    const text = textField(body[key]);
    if (text !== undefined) return text;
  }
  const choice = Array.isArray(body.choices) ? asObject(body.choices[0]) : null;
  if (choice === null) return undefined;
  return (
    textField(choice.text) ||
    asObject(choice.message)?.content ||
    asObject(choice.delta)?.content ||
    undefined
  );
}

/** The finish reason an answer names (`finish_reason`, `details.finish_reason`, `choices[0].finish_reason`). */
function finishReasonOf(body: Record<string, unknown>): string | null {
  const choice = Array.isArray(body.choices) ? asObject(body.choices[0]) : null;
  const reason = body.finish_reason ?? asObject(body.details)?.finish_reason ?? choice?.finish_reason;
  return typeof reason === 'string' && reason !== '' ? reason : null;
}

/**
 * Parses one answer (or streamed event) of a template run: an in-band `error`, the finish reason,
 * and the output at `responseField` (null: {@link detectOutput}). Never throws.
 */
export function parseTemplateAnswer(
  json: unknown,
  responseField: readonly PathStep[] | null,
): ParsedResponse {
  const parsed = emptyParse();
  const body = asObject(json);
  if (body !== null) {
    parsed.error = inBandError(body);
    if (parsed.error !== null) return parsed;
    parsed.finishReason = finishReasonOf(body);
  }
  applyOutput(parsed, responseField === null ? detectOutput(json) : valueAt(json, responseField));
  return parsed;
}

const PROPERTIES = {
  name: 'template',
  defaultPath: '',
  streamable: true,
  generatesTokens: true,
  chatTemplated: false,
} as const;

/**
 * The `template` adapter of a run whose endpoint options are `options`: its body template and
 * answer field read from `options.extraInputs`.
 * @throws {ConfigError} as {@link templateSettings}.
 */
export function templateAdapter(options: EndpointOptions): EndpointAdapter {
  const settings = templateSettings(options.extraInputs);
  // The options carried to worker threads hold the template text, so they do not read the file again.
  const carried = { extraInputs: { ...options.extraInputs, [PAYLOAD_TEMPLATE_KEY]: settings.source } };
  return {
    ...PROPERTIES,
    options: carried,
    configure: templateAdapter,
    buildBody: (input) => renderBody(settings, input),
    parse: (json) => parseTemplateAnswer(json, settings.responseField),
  };
}

/**
 * The registry's `template` adapter, before a run's options are known: its properties, and a
 * {@link EndpointAdapter.configure} that builds the run's adapter ({@link templateAdapter}). Its own
 * `buildBody` throws (a run always configures it); its `parse` auto-detects.
 */
export const template: EndpointAdapter = {
  ...PROPERTIES,
  configure: templateAdapter,
  buildBody: () => {
    throw new Error(`--endpoint-type template needs --extra-inputs ${PAYLOAD_TEMPLATE_KEY}:<template>`);
  },
  parse: (json) => parseTemplateAnswer(json, null),
};
