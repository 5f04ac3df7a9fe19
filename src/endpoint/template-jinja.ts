/**
 * Body templates of the `template` endpoint type, compiled with `@huggingface/jinja` but rendered
 * as Jinja2 (which AIPerf uses) renders them where the two differ in ways AIPerf's documented
 * templates meet: Jinja2's `lower`, `upper`, `capitalize` and `title` filters first turn any value
 * into its Python text (`str(True)` is `True`, so `{{ stream|lower }}` gives `true`; `None` gives
 * `none`), where `@huggingface/jinja` takes strings only and throws on a boolean. Each such filter's
 * operand is wrapped, once at compile time, in a call of a function that gives Python's text.
 */
import { Template } from '@huggingface/jinja';

/** The string filters that Jinja2 applies to a value's Python text. */
const TEXT_FILTERS: ReadonlySet<string> = new Set(['lower', 'upper', 'capitalize', 'title']);

/** Name under which the Python-text function is passed to the template. */
const PY_STR = '__tokenload_py_str';

/** A compiled body template. */
export interface BodyTemplate {
  /**
   * Renders the template with `variables` (JSON-like values: strings, numbers, booleans, null,
   * arrays, plain objects).
   * @throws {Error} when the template fails at render time (an unknown filter, a bad operand).
   */
  render(variables: Readonly<Record<string, unknown>>): string;
}

/**
 * Python's `str()` of a scalar as Jinja2 would print it: `True`/`False`, `None`, numbers and
 * strings as they are; anything else as JSON (the only nested values tokenload passes are JSON).
 */
function pythonText(value: unknown): string {
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value) ?? 'None';
}

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null;
}

/** True when `node` is `operand|lower` (or another of {@link TEXT_FILTERS}) without arguments. */
function isTextFilter(node: Node): boolean {
  if (node.type !== 'FilterExpression' || !isNode(node.filter)) return false;
  const filter = node.filter;
  return filter.type === 'Identifier' && typeof filter.value === 'string' && TEXT_FILTERS.has(filter.value);
}

/**
 * Wraps the operand of every {@link TEXT_FILTERS} filter of the parsed program in a call of
 * {@link PY_STR}. The nodes made are plain objects of the parser's node shapes (`type`, `callee`,
 * `args`, `value`), which the interpreter reads by their `type`.
 */
function wrapTextFilters(node: unknown, seen: Set<unknown>): void {
  if (!isNode(node) || seen.has(node)) return;
  seen.add(node);
  for (const child of Object.values(node)) {
    if (Array.isArray(child)) for (const item of child) wrapTextFilters(item, seen);
    else wrapTextFilters(child, seen);
  }
  if (isTextFilter(node)) {
    node.operand = {
      type: 'CallExpression',
      callee: { type: 'Identifier', value: PY_STR },
      args: [node.operand],
    };
  }
}

/**
 * Compiles `source` (Jinja2 syntax, the subset `@huggingface/jinja` parses) into a {@link BodyTemplate}.
 * @throws {Error} when the source does not parse.
 */
export function compileBodyTemplate(source: string): BodyTemplate {
  const template = new Template(source);
  wrapTextFilters(template.parsed, new Set());
  return { render: (variables) => template.render({ ...variables, [PY_STR]: pythonText }) };
}
