/**
 * Validates Kubernetes objects offline against the API's OpenAPI schemas, as packaged by the
 * `kubernetes-models` npm package (pinned dev dependency): each object through its model's
 * `validate()` (types, enums, required fields, formats), and all of them through the package's
 * generated TypeScript interfaces, whose excess-property check catches the unknown or misspelt
 * fields the JSON schemas let through (what `kubectl apply --validate=strict` refuses).
 */
import { join } from 'node:path';
import ts from 'typescript';
import { PROJECT_ROOT } from './test-cache.js';

/** The repository root, where `kubernetes-models` resolves from. */
const ROOT = PROJECT_ROOT;

/** Any Kubernetes object: `apiVersion` `group/version` (or `v1`), `kind`, `metadata.name`. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [key: string]: unknown };
  [key: string]: unknown;
}

type Model = new (data: unknown) => { validate(): void };

const label = (o: K8sObject) => `${o.kind} ${o.metadata.name}`;

/** The schema errors of one object, by its model's `validate()`; `[]` when valid. */
async function schemaErrors(o: K8sObject): Promise<string[]> {
  let module: Record<string, Model>;
  try {
    module = (await import(`kubernetes-models/${o.apiVersion}/${o.kind}`)) as Record<string, Model>;
  } catch {
    return [`${label(o)}: no model for ${o.apiVersion} ${o.kind}`];
  }
  const ModelClass = module[o.kind];
  if (ModelClass === undefined) return [`${label(o)}: no model for ${o.apiVersion} ${o.kind}`];
  try {
    new ModelClass(o).validate();
    return [];
  } catch (err) {
    return [`${label(o)}: ${(err as Error).message}`];
  }
}

/**
 * Type-checks every object as a literal of its `kubernetes-models` interface (`IJob`, `IPod`, …) in
 * one in-memory program; each diagnostic names the object and the field. An object with errors gets
 * at least one (the checker may report one error of a literal and not the others).
 */
function unknownFieldErrors(objects: readonly K8sObject[]): string[] {
  const file = join(ROOT, '__k8s_objects__.ts');
  const lines = objects.flatMap((o, i) => [
    `import type { I${o.kind} as T${i} } from 'kubernetes-models/${o.apiVersion}/${o.kind}';`,
    `export const o${i}: T${i} = ${JSON.stringify(o)};`,
  ]);
  const text = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const host = ts.createCompilerHost(options);
  const readSource = host.getSourceFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, text, version) : readSource(name, version, ...rest);
  host.fileExists = (name) => name === file || exists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line =
      d.file === undefined || d.start === undefined ? -1 : d.file.getLineAndCharacterOfPosition(d.start).line;
    const o = objects[Math.floor(line / 2)];
    const what = o === undefined ? 'objects' : label(o);
    return `${what}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

/**
 * Every schema and unknown-field error of `objects`, each naming its object; `[]` when all are valid.
 * An object whose apiVersion/kind the package has no model for is an error.
 */
export async function kubernetesErrors(objects: readonly K8sObject[]): Promise<string[]> {
  const schema = (await Promise.all(objects.map(schemaErrors))).flat();
  return [...schema, ...unknownFieldErrors(objects)];
}
