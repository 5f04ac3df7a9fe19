/**
 * deploy/kubernetes: renders the manifests with `render.mjs` as an operator would (a child process,
 * its stdout), validates every object against the Kubernetes OpenAPI schemas (kubernetes-models) with
 * unknown fields refused, and checks what makes a sharded run exact: each shard's index from
 * JOB_COMPLETION_INDEX, completions = parallelism = --shard-count, one --start-at, no retry, shards
 * kept apart, non-root pods, and a merge Job over exactly the shards' folders. Bad parameters exit 2
 * with a message naming the flag and print no manifest. Also checks the image definition against
 * package.json. No cluster, no kubectl, no docker.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { ensureBuilt } from '../helpers/built-package.js';
import { type K8sObject, kubernetesErrors } from '../helpers/k8s-schema.js';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

const ROOT = `${PROJECT_ROOT}/`;
const SCRIPT = `${ROOT}deploy/kubernetes/render.mjs`;
const SMALL_TRACE = `${ROOT}examples/traces/bailian_traceA_stratified_head24.jsonl`;
/** 3 MB: more than a ConfigMap holds. */
const LARGE_TRACE = `${ROOT}examples/traces/mooncake_conversation_trace.jsonl`;
const IMAGE = 'registry.example.com/tokenload:0.1.0';

interface Rendered {
  status: number | null;
  stdout: string;
  stderr: string;
}

function render(args: readonly string[]): Rendered {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The objects of a successful render; YAML 1.1 (Kubernetes' parser) and 1.2 must read the same. */
function objectsOf(args: readonly string[]): { objects: K8sObject[]; stderr: string } {
  const r = render(args);
  assert.equal(r.status, 0, r.stderr);
  const read = (version: '1.1' | '1.2') =>
    parseAllDocuments(r.stdout, { version }).map((doc) => {
      assert.deepEqual(doc.errors, []);
      return doc.toJS() as K8sObject;
    });
  const objects = read('1.2');
  assert.deepEqual(read('1.1'), objects);
  return { objects, stderr: r.stderr };
}

const TARGET = 'http://vllm.llm.svc.cluster.local:8000';
/** A shards command line; `url` null leaves --url out. */
const shardArgs = (extra: readonly string[], url: string | null = TARGET) => [
  'shards',
  '--image',
  IMAGE,
  ...(url === null ? [] : ['--url', url]),
  '--model',
  'Qwen/Qwen3-0.6B',
  '--custom-dataset-type',
  'bailian_trace',
  ...extra,
];

// biome-ignore lint/suspicious/noExplicitAny: parsed manifests, checked field by field below
type Obj = Record<string, any>;

const byKind = (objects: K8sObject[], kind: string): Obj[] => objects.filter((o) => o.kind === kind);
const onlyOne = (objects: K8sObject[], kind: string): Obj => {
  const found = byKind(objects, kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0]!;
};
const valueAfter = (args: string[], flag: string): string | undefined => {
  const at = args.indexOf(flag);
  assert.equal(args.lastIndexOf(flag), at, `${flag} once`);
  return at === -1 ? undefined : args[at + 1];
};

/** Every pod runs as a non-root user, without privilege escalation or capabilities, Guaranteed. */
function assertPodHardened(pod: Obj, where: string): void {
  assert.equal(pod.securityContext.runAsNonRoot, true, where);
  assert.ok(pod.securityContext.runAsUser > 0, where);
  for (const c of pod.containers as Obj[]) {
    assert.equal(c.securityContext.allowPrivilegeEscalation, false, where);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true, where);
    assert.deepEqual(c.securityContext.capabilities.drop, ['ALL'], where);
    assert.deepEqual(c.resources.requests, c.resources.limits, `${where}: requests = limits`);
    const mounts = new Set((pod.volumes as Obj[]).map((v) => v.name));
    for (const m of c.volumeMounts as Obj[]) assert.ok(mounts.has(m.name), `${where}: volume ${m.name}`);
    // $(VAR) in args expands only from the container's own env.
    const env = new Set((c.env as Obj[]).map((e) => e.name));
    for (const arg of (c.args ?? []) as string[]) {
      for (const [, name] of arg.matchAll(/\$\(([A-Z_]+)\)/g))
        assert.ok(env.has(name!), `${where}: ${name} in env`);
    }
  }
}

/** The checks every shard Job must pass; returns its container's args. */
function assertShardJob(job: Obj, shardCount: number): string[] {
  assert.equal(job.spec.completionMode, 'Indexed');
  assert.equal(job.spec.completions, shardCount);
  assert.equal(job.spec.parallelism, shardCount);
  assert.equal(job.spec.backoffLimitPerIndex, 0, 'a failed shard is never retried');
  for (const rule of job.spec.podFailurePolicy?.rules ?? []) assert.notEqual(rule.action, 'Ignore');
  const pod = job.spec.template.spec;
  assert.equal(pod.restartPolicy, 'Never');
  assertPodHardened(pod, 'shard');
  const [container] = pod.containers as Obj[];
  const index = (container!.env as Obj[]).find((e) => e.name === 'JOB_COMPLETION_INDEX');
  assert.equal(
    index?.valueFrom?.fieldRef?.fieldPath,
    "metadata.annotations['batch.kubernetes.io/job-completion-index']",
  );
  const args = container!.args as string[];
  assert.equal(args[0], 'profile');
  assert.equal(valueAfter(args, '--shard-index'), '$(JOB_COMPLETION_INDEX)');
  assert.equal(valueAfter(args, '--shard-count'), String(shardCount));
  assert.match(valueAfter(args, '--artifact-dir') ?? '', /\/shard-\$\(JOB_COMPLETION_INDEX\)$/);
  // The anti-affinity selects the shards' own labels, so it keeps them apart.
  const affinity = pod.affinity.podAntiAffinity;
  const term =
    affinity.requiredDuringSchedulingIgnoredDuringExecution?.[0] ??
    affinity.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm;
  assert.equal(term.topologyKey, 'kubernetes.io/hostname');
  for (const [k, v] of Object.entries(term.labelSelector.matchLabels)) {
    assert.equal(job.spec.template.metadata.labels[k], v, `anti-affinity selects ${k}`);
  }
  return args;
}

/** Runs the merge command the shards render printed, as the operator pastes it. */
function mergeFromNote(stderr: string): K8sObject[] {
  const line = stderr.split('\n').find((l) => l.includes('render.mjs merge'));
  assert.ok(line, stderr);
  const args = line.replace(/\|.*$/, '').trim().split(/\s+/).slice(2);
  return objectsOf(args).objects;
}

test('shards with a ConfigMap trace: 4 shards from one template, the trace byte for byte, and the merge over their folders', async () => {
  const before = Date.now();
  const { objects, stderr } = objectsOf(
    shardArgs(['--trace', SMALL_TRACE, '--shard-count', '4', '--', '--endpoint-type', 'chat', '--streaming']),
  );
  const merge = mergeFromNote(stderr);
  assert.deepEqual(await kubernetesErrors([...objects, ...merge]), []);

  const job = onlyOne(objects, 'Job');
  const args = assertShardJob(job, 4);
  const startMs = Date.parse(valueAfter(args, '--start-at') ?? '');
  assert.ok(startMs >= before + 180_000 && startMs <= Date.now() + 181_000, 'default start: now + 180 s');
  assert.deepEqual(args.slice(-3), ['--endpoint-type', 'chat', '--streaming']);
  assert.equal(
    job.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.length,
    1,
  );

  const configMap = onlyOne(objects, 'ConfigMap');
  const inputFile = valueAfter(args, '--input-file') ?? '';
  const mount = (job.spec.template.spec.containers[0].volumeMounts as Obj[]).find((m) =>
    inputFile.startsWith(`${m.mountPath}/`),
  );
  const volume = (job.spec.template.spec.volumes as Obj[]).find((v) => v.name === mount?.name);
  assert.equal(volume?.configMap?.name, configMap.metadata.name);
  const key = inputFile.slice(`${mount?.mountPath}/`.length);
  assert.equal(configMap.data[key], readFileSync(SMALL_TRACE, 'utf8'));

  const mergeJob = onlyOne(merge, 'Job');
  assert.equal(mergeJob.spec.backoffLimit, 0);
  assertPodHardened(mergeJob.spec.template.spec, 'merge');
  const shardDir = valueAfter(args, '--artifact-dir') ?? '';
  const run = shardDir.replace(/\/shard-.*$/, '');
  assert.deepEqual(mergeJob.spec.template.spec.containers[0].args, [
    'merge',
    ...[0, 1, 2, 3].map((i) => shardDir.replace('$(JOB_COMPLETION_INDEX)', String(i))),
    '--artifact-dir',
    `${run}/merged`,
  ]);
});

test('shards with the trace on the volume, explicit start, preferred spread, sized pods, a token secret', async () => {
  const startAt = new Date(Date.now() + 3_600_000).toISOString();
  const { objects } = objectsOf(
    shardArgs([
      '--trace-on-volume',
      'traces/mooncake.jsonl',
      '--shard-count',
      '1',
      '--start-at',
      startAt,
      '--spread',
      'preferred',
      '--workers',
      '3',
      '--memory',
      '6Gi',
      '--hf-token-secret',
      'hf-token',
      '--name',
      'mooncake-10x',
      '--namespace',
      'bench',
      '--pvc',
      'shared',
    ]),
  );
  assert.deepEqual(await kubernetesErrors(objects), []);
  assert.equal(byKind(objects, 'ConfigMap').length, 0);
  const job = onlyOne(objects, 'Job');
  assert.equal(job.metadata.namespace, 'bench');
  const args = assertShardJob(job, 1);
  assert.equal(valueAfter(args, '--start-at'), startAt);
  assert.equal(valueAfter(args, '--input-file'), '/results/traces/mooncake.jsonl');
  assert.equal(valueAfter(args, '--artifact-dir'), '/results/mooncake-10x/shard-$(JOB_COMPLETION_INDEX)');
  assert.equal(valueAfter(args, '--workers'), '3');
  const pod = job.spec.template.spec;
  assert.deepEqual(pod.containers[0].resources.limits, { cpu: '4', memory: '6Gi' });
  assert.equal(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.length, 1);
  assert.equal(
    (pod.volumes as Obj[]).find((v) => v.name === 'results')?.persistentVolumeClaim.claimName,
    'shared',
  );
  const token = (pod.containers[0].env as Obj[]).find((e) => e.name === 'HF_TOKEN');
  assert.deepEqual(token?.valueFrom.secretKeyRef, { name: 'hf-token', key: 'HF_TOKEN' });
});

test('16 shards from an epoch-ms start; volume, calibrate and a partial merge validate', async () => {
  const startMs = Date.now() + 600_000;
  const shards = objectsOf(
    shardArgs(['--trace', SMALL_TRACE, '--shard-count', '16', '--start-at', String(startMs)]),
  );
  const volume = objectsOf([
    'volume',
    '--image',
    IMAGE,
    '--storage-class',
    'nfs-client',
    '--size',
    '50Gi',
  ]).objects;
  const calibrate = objectsOf(['calibrate', '--image', IMAGE, '--workers', '2']).objects;
  const merge = objectsOf([
    'merge',
    '--image',
    IMAGE,
    '--name',
    'r1',
    '--shard-count',
    '3',
    '--allow-partial',
  ]).objects;
  assert.deepEqual(await kubernetesErrors([...shards.objects, ...volume, ...calibrate, ...merge]), []);

  const args = assertShardJob(onlyOne(shards.objects, 'Job'), 16);
  assert.equal(Date.parse(valueAfter(args, '--start-at') ?? ''), startMs);
  const pvc = onlyOne(volume, 'PersistentVolumeClaim');
  assert.deepEqual(pvc.spec.accessModes, ['ReadWriteMany']);
  assert.equal(pvc.spec.storageClassName, 'nfs-client');
  const helper = onlyOne(volume, 'Pod');
  assertPodHardened(helper.spec, 'helper');
  assert.equal((helper.spec.volumes as Obj[])[0]?.persistentVolumeClaim.claimName, pvc.metadata.name);
  const calibration = onlyOne(calibrate, 'Job');
  assertPodHardened(calibration.spec.template.spec, 'calibrate');
  assert.deepEqual(calibration.spec.template.spec.containers[0].args.slice(0, 3), [
    'calibrate',
    '--workers',
    '2',
  ]);
  assert.equal(calibration.spec.template.spec.containers[0].resources.limits.cpu, '3');
  assert.deepEqual(onlyOne(merge, 'Job').spec.template.spec.containers[0].args, [
    'merge',
    '/results/r1/shard-0',
    '/results/r1/shard-1',
    '/results/r1/shard-2',
    '--artifact-dir',
    '/results/r1/merged',
    '--allow-partial',
  ]);
});

test('the validator refuses an unknown field and a wrong type (the check can fail)', async () => {
  const { objects } = objectsOf(shardArgs(['--trace', SMALL_TRACE, '--shard-count', '2']));
  const misspelt = structuredClone(onlyOne(objects, 'Job')) as K8sObject & Obj;
  misspelt.spec.backoffLimitPerIndx = 0;
  const mistyped = structuredClone(onlyOne(objects, 'Job')) as K8sObject & Obj;
  mistyped.spec.template.spec.containers[0].resources.limits.cpu = { cores: 2 };
  const unknown = await kubernetesErrors([misspelt]);
  assert.ok(
    unknown.some((e) => e.includes('"backoffLimitPerIndx"') && e.includes('does not exist in type')),
    unknown.join('\n'),
  );
  const wrongType = await kubernetesErrors([mistyped]);
  assert.ok(
    wrongType.some((e) => e.includes('/limits/cpu must be string')),
    wrongType.join('\n'),
  );
});

/** A small Mooncake trace (two rows), which shards declared bailian_trace must refuse. */
function mooncakeTrace(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tokenload-k8s-')), 'mooncake-rows.jsonl');
  const rows = [0, 500].map((timestamp) => ({
    timestamp,
    input_length: 64,
    output_length: 8,
    hash_ids: [1],
  }));
  writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return file;
}

test('bad parameters exit 2 naming the flag, and print no manifest', () => {
  // The profile flags after -- are checked by the built package's parser (render.mjs imports dist/).
  ensureBuilt();
  const past = new Date(Date.now() - 60_000).toISOString();
  const twoShards = (...more: string[]) => shardArgs(['--trace', SMALL_TRACE, '--shard-count', '2', ...more]);
  const cases: Array<[string[], RegExp]> = [
    [
      shardArgs(['--trace', SMALL_TRACE, '--shard-count', '0']),
      /--shard-count 0: must be a whole number ≥ 1/,
    ],
    [shardArgs(['--trace', SMALL_TRACE]), /--shard-count is required/],
    [twoShards('--start-at', past), /--start-at .* is in the past/],
    [twoShards('--start-at', '2030-01-01T00:00:00'), /--start-at .*with its zone/],
    [twoShards('--start-at', new Date(Date.now() + 5_000).toISOString()), /at least 30 s/],
    [shardArgs(['--trace', SMALL_TRACE, '--shard-count', '2'], null), /--url is required/],
    [
      shardArgs(['--trace', SMALL_TRACE, '--shard-count', '2'], 'localhost:8000'),
      /--url localhost:8000: a loopback/,
    ],
    [
      shardArgs(['--trace', LARGE_TRACE, '--shard-count', '2']),
      /more than a ConfigMap holds.*--trace-on-volume/,
    ],
    [shardArgs(['--shard-count', '2']), /--trace FILE .* or --trace-on-volume PATH/],
    [twoShards('--trace-on-volume', 'traces/t.jsonl'), /give the trace once: .*not both/],
    [twoShards('--', '--shard-index', '1'), /--shard-index after --: render.mjs sets it/],
    [
      twoShards('--', '--concurrency', 'abc'),
      /tokenload profile would refuse .*'--concurrency .*'abc' is invalid/,
    ],
    [twoShards('--', '--no-such-flag'), /tokenload profile would refuse .*unknown option '--no-such-flag'/],
    [twoShards('--', '--endpoint-type', 'nope'), /tokenload profile would refuse .*--endpoint-type/],
    [
      shardArgs(['--trace', mooncakeTrace(), '--shard-count', '2']),
      /tokenload profile would refuse the trace: .*mooncake-rows\.jsonl:1: .*--custom-dataset-type mooncake_trace/,
    ],
    [twoShards('--cpu', '1.5'), /--cpu 1.5: must be a whole number/],
    [twoShards('--allow-partial'), /--allow-partial: not an option of shards/],
    [['merge', '--image', IMAGE, '--shard-count', '2'], /--name is required/],
    [['volume'], /--image is required/],
    [['deploy', '--image', IMAGE], /unknown command deploy/],
  ];
  for (const [args, message] of cases) {
    const r = render(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^render\.mjs: error: /);
    assert.match(r.stderr, message);
    assert.equal(r.stdout, '');
  }
});

test('the image: runtime stage installs production dependencies only and copies every packaged path, non-root', () => {
  const dockerfile = readFileSync(`${ROOT}deploy/kubernetes/Dockerfile`, 'utf8');
  const stages = dockerfile.split(/^FROM /m);
  const runtime = stages.at(-1) ?? '';
  assert.ok(stages.length >= 3, 'a build stage and a runtime stage');
  assert.match(stages[1] ?? '', /RUN npm ci\b/);
  assert.match(stages[1] ?? '', /RUN npm run build/);
  assert.match(runtime, /npm ci --omit=dev/);
  const copied = [...runtime.matchAll(/^COPY (?:--from=build )?(.+?) \S+$/gm)].flatMap((m) =>
    m[1]!.split(' ').map((p) => p.replace(/^\/src\//, '').split('/')[0]),
  );
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { files: string[] };
  for (const path of pkg.files) assert.ok(copied.includes(path), `the image copies ${path}`);
  const user = /^USER (\d+)(:\d+)?$/m.exec(runtime);
  assert.ok(user && Number(user[1]) > 0, 'a numeric non-root USER');
  assert.match(runtime, /^ENTRYPOINT \["tokenload"\]$/m);
  const ignore = readFileSync(`${ROOT}deploy/kubernetes/Dockerfile.dockerignore`, 'utf8');
  // dist/ is built in the image, never sent.
  for (const path of pkg.files.filter((p) => p !== 'dist')) {
    assert.match(ignore, new RegExp(`^!${path}$`, 'm'), `the build context sends ${path}`);
  }
});
