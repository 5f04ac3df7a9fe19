#!/usr/bin/env node
/**
 * Prints tokenload's Kubernetes manifests (multi-document YAML on stdout) for one step of a sharded
 * run; docs/kubernetes.md is the walk-through. Dependency-free: Node ≥ 20
 * and this file are enough (no kubectl, no npm install).
 *
 *   volume     the shared ReadWriteMany volume for the artifact folders, and a helper pod on it
 *   calibrate  a Job running `tokenload calibrate` in a pod the size of one shard
 *   shards     the trace (a ConfigMap, or a file on the volume) and the Indexed Job of the shards
 *   merge      the Job running `tokenload merge` over the shards' folders
 *
 * Bad parameters exit 2 with `render.mjs: error: …` on stderr and print nothing on stdout. The
 * shards' `tokenload profile` command line (with the PROFILE_ARGS after `--`) is checked by
 * tokenload's own configuration parser, from the built package of this checkout (`dist/`, which
 * `npm ci` builds), before anything is printed: a flag or value `tokenload profile` would refuse
 * fails here, named. Without the built package, PROFILE_ARGS are refused (they cannot be checked);
 * without PROFILE_ARGS the script needs nothing but Node.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** Where the shared volume is mounted in every pod. */
const RESULTS_DIR = '/results';
/** Where the trace ConfigMap is mounted. */
const TRACE_DIR = '/trace';
/** A ConfigMap holds at most 1 MiB; the trace gets the room its metadata leaves. */
const CONFIGMAP_TRACE_MAX_BYTES = 1_000_000;
/** The earliest `--start-at`, seconds from now: the pods must be scheduled and running before it. */
const MIN_LEAD_S = 30;
/** The image's user and group (the node image's `node` user). */
const UID = 1000;
/** Seconds between SIGTERM and SIGKILL: tokenload's grace period for in-flight requests, then its exports. */
const TERMINATION_GRACE_S = 90;
/** Run names are DNS labels short enough for `<name>-shards-<index>` pod host names. */
const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/;
/** Kubernetes quantities: a number with an optional decimal or binary suffix. */
const QUANTITY_PATTERN = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
/** Profile flags the script sets itself (their AIPerf aliases too); PROFILE_ARGS may not repeat them. */
const RESERVED_PROFILE_FLAGS = [
  '-m',
  '--model',
  '--model-names',
  '-u',
  '--url',
  '--input-file',
  '--custom-dataset-type',
  '--artifact-dir',
  '--output-artifact-dir',
  '--workers',
  '--workers-max',
  '--max-workers',
  '--shard-index',
  '--shard-count',
  '--start-at',
];

/** A parameter the operator gave wrong; the message names the flag. */
class UsageError extends Error {}

/** The built package of this checkout: its `parseProfileArgs` is what `tokenload profile` parses with. */
const PACKAGE_ENTRY = new URL('../../dist/src/index.js', import.meta.url);
/** The built package's check of a trace file against its declared `--custom-dataset-type`. */
const FORMAT_CHECK = new URL('../../dist/src/dataset/format-check.js', import.meta.url);

const USAGE = `usage: node deploy/kubernetes/render.mjs COMMAND --image IMAGE [options] > manifests.yaml

commands and their options (every command: --image IMAGE (required), --namespace NS (default tokenload),
--pvc NAME (the shared volume, default tokenload-results)):
  volume     [--size 20Gi] [--storage-class CLASS]
             the ReadWriteMany PersistentVolumeClaim and the helper pod tokenload-helper
  calibrate  [--workers 1] [--cpu WORKERS+1] [--memory 2Gi]
             a Job running tokenload calibrate in a pod of one shard's size
  shards     --url URL --model MODEL --custom-dataset-type TYPE (--trace FILE | --trace-on-volume PATH)
             --shard-count N [--start-at ISO|EPOCH_MS | --start-in SECONDS (default 180)] [--name RUN]
             [--workers 1] [--cpu WORKERS+1] [--memory 2Gi] [--spread required|preferred]
             [--hf-token-secret SECRET] [-- PROFILE_ARGS...]
             the trace ConfigMap (--trace, at most 1 MB) and the Indexed Job of the shards
  merge      --name RUN --shard-count N [--allow-partial] [--memory 2Gi]
             the Job merging the shards' folders into ${RESULTS_DIR}/RUN/merged

docs/kubernetes.md is the walk-through.`;

/** Options of every command, for node:util parseArgs. */
const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  image: { type: 'string' },
  namespace: { type: 'string', default: 'tokenload' },
  pvc: { type: 'string', default: 'tokenload-results' },
  size: { type: 'string', default: '20Gi' },
  'storage-class': { type: 'string' },
  name: { type: 'string' },
  url: { type: 'string' },
  model: { type: 'string' },
  'custom-dataset-type': { type: 'string' },
  trace: { type: 'string' },
  'trace-on-volume': { type: 'string' },
  'shard-count': { type: 'string' },
  'start-at': { type: 'string' },
  'start-in': { type: 'string' },
  workers: { type: 'string', default: '1' },
  cpu: { type: 'string' },
  memory: { type: 'string', default: '2Gi' },
  spread: { type: 'string', default: 'required' },
  'hf-token-secret': { type: 'string' },
  'allow-partial': { type: 'boolean', default: false },
};

/** Which options each command takes, besides help, image, namespace and pvc. */
const COMMAND_OPTIONS = {
  volume: ['size', 'storage-class'],
  calibrate: ['workers', 'cpu', 'memory'],
  shards: [
    'name',
    'url',
    'model',
    'custom-dataset-type',
    'trace',
    'trace-on-volume',
    'shard-count',
    'start-at',
    'start-in',
    'workers',
    'cpu',
    'memory',
    'spread',
    'hf-token-secret',
  ],
  merge: ['name', 'shard-count', 'allow-partial', 'memory'],
};

// ---------------------------------------------------------------------------------------------
// Parameters

/** `--flag VALUE` (required) as a whole number ≥ `min`. */
function wholeNumber(flag, text, min) {
  if (text === undefined) throw new UsageError(`--${flag} is required`);
  if (!/^[0-9]+$/.test(text) || Number(text) < min) {
    throw new UsageError(`--${flag} ${text}: must be a whole number ≥ ${min}`);
  }
  return Number(text);
}

/** The value of a required flag, or a UsageError naming it. */
function required(values, flag) {
  const value = values[flag];
  if (value === undefined || value.trim() === '') throw new UsageError(`--${flag} is required`);
  return value.trim();
}

/** A Kubernetes name (run, PVC, secret): a DNS label short enough for the names derived from it. */
function dnsName(flag, text) {
  if (!NAME_PATTERN.test(text)) {
    throw new UsageError(
      `--${flag} ${text}: must be 1–40 lowercase letters, digits or '-', starting and ending with a letter or digit`,
    );
  }
  return text;
}

/**
 * The shards' common start: `--start-at` (ISO 8601 with a zone, or epoch ms) or now + `--start-in`
 * seconds (default 180, rounded up to a whole second), at least {@link MIN_LEAD_S} s ahead.
 */
function startTime(values, nowMs) {
  const at = values['start-at'];
  if (at !== undefined && values['start-in'] !== undefined) {
    throw new UsageError('--start-at and --start-in: give one of them');
  }
  if (at === undefined) {
    const inS = wholeNumber('start-in', values['start-in'] ?? '180', MIN_LEAD_S);
    return new Date(Math.ceil((nowMs + inS * 1000) / 1000) * 1000);
  }
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(at);
  const atMs = /^[0-9]+$/.test(at) ? Number(at) : zoned ? Date.parse(at) : Number.NaN;
  if (!Number.isFinite(atMs)) {
    throw new UsageError(
      `--start-at ${at}: not a time; give an ISO 8601 time with its zone (2026-12-01T20:30:00Z) or epoch milliseconds`,
    );
  }
  const leadS = (atMs - nowMs) / 1000;
  if (leadS <= 0) {
    throw new UsageError(
      `--start-at ${at}: ${new Date(atMs).toISOString()} is in the past (now ${new Date(nowMs).toISOString()})`,
    );
  }
  if (leadS < MIN_LEAD_S) {
    throw new UsageError(
      `--start-at ${at}: only ${leadS.toFixed(0)} s from now; the pods must be scheduled, pull the image and read the trace first: give at least ${MIN_LEAD_S} s`,
    );
  }
  return new Date(atMs);
}

/** `--flag VALUE` as a Kubernetes quantity (2Gi, 1500Mi). */
function quantity(flag, text) {
  if (!QUANTITY_PATTERN.test(text))
    throw new UsageError(`--${flag} ${text}: not a Kubernetes quantity (e.g. 2Gi, 1500Mi)`);
  return text;
}

/**
 * `--workers`, `--cpu` and `--memory` of a shard-sized pod. CPU in whole cores (default workers + 1:
 * the sending threads, plus one for the timing thread, the metrics scraper and V8's GC): a
 * Guaranteed pod with whole cores gets exclusive CPUs under the static CPU manager.
 */
function podSize(values) {
  const workers = wholeNumber('workers', values.workers, 1);
  const cpu = values.cpu === undefined ? workers + 1 : wholeNumber('cpu', values.cpu, 1);
  return { workers, cpu: String(cpu), memory: quantity('memory', values.memory) };
}

/**
 * The trace as the shards read it: `--trace FILE`, embedded in a ConfigMap (at most
 * {@link CONFIGMAP_TRACE_MAX_BYTES}, UTF-8), or `--trace-on-volume PATH` on the shared volume.
 */
function traceSource(values) {
  const file = values.trace;
  const onVolume = values['trace-on-volume'];
  if (file !== undefined && onVolume !== undefined) {
    throw new UsageError('give the trace once: --trace FILE or --trace-on-volume PATH, not both');
  }
  if (file === undefined && onVolume === undefined) {
    throw new UsageError('give the trace: --trace FILE (at most 1 MB) or --trace-on-volume PATH');
  }
  if (onVolume !== undefined) {
    if (onVolume.startsWith('/') || onVolume.split('/').includes('..') || onVolume.trim() === '') {
      throw new UsageError(
        `--trace-on-volume ${onVolume}: must be a path inside the volume, like traces/trace.jsonl`,
      );
    }
    return { inputFile: `${RESULTS_DIR}/${onVolume}` };
  }
  let bytes;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new UsageError(`--trace ${file}: cannot read it (${err.message})`);
  }
  if (bytes.length > CONFIGMAP_TRACE_MAX_BYTES) {
    throw new UsageError(
      `--trace ${file}: ${bytes.length} bytes, more than a ConfigMap holds (${CONFIGMAP_TRACE_MAX_BYTES}); copy it onto the volume and give --trace-on-volume (docs/kubernetes.md)`,
    );
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`--trace ${file}: not UTF-8 text`);
  }
  const key = basename(file).replace(/[^-._a-zA-Z0-9]/g, '_');
  return { inputFile: `${TRACE_DIR}/${key}`, configMap: { key, text }, localFile: file };
}

/** PROFILE_ARGS after `--`, refused when they set what the script sets. */
function profileArgs(extra) {
  for (const arg of extra) {
    const flag = arg.split('=')[0];
    if (RESERVED_PROFILE_FLAGS.includes(flag)) {
      throw new UsageError(`${flag} after --: render.mjs sets it (use its own option, see --help)`);
    }
  }
  return extra;
}

/** The target URL; a loopback address would be each pod's own, so it is refused. */
function targetUrl(values) {
  const url = required(values, 'url');
  if (/\s/.test(url)) throw new UsageError(`--url ${url}: contains spaces`);
  if (/^(https?:\/\/)?(localhost|127\.[0-9.]+|\[::1\])(:|\/|$)/i.test(url)) {
    throw new UsageError(
      `--url ${url}: a loopback address is each pod's own; give the server's Service or address`,
    );
  }
  return url;
}

/** Run name: `--name`, or tokenload-YYYYMMDD-HHMMSS of the start time (UTC). */
function runName(values, start) {
  if (values.name !== undefined) return dnsName('name', values.name);
  const stamp = start.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  return `tokenload-${stamp}`;
}

// ---------------------------------------------------------------------------------------------
// Objects

/** Labels of every object of a run; `kubectl delete … -l app.kubernetes.io/instance=RUN` cleans up. */
function labels(instance, component) {
  return {
    'app.kubernetes.io/name': 'tokenload',
    'app.kubernetes.io/instance': instance,
    'app.kubernetes.io/component': component,
  };
}

function metadata(common, name, objectLabels) {
  return { name, namespace: common.namespace, labels: objectLabels };
}

/** Non-root, no privilege escalation, no capabilities, read-only root file system. */
const CONTAINER_SECURITY = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

/** The pod-level security context: the image's user, group-owned volumes. */
const POD_SECURITY = {
  runAsNonRoot: true,
  runAsUser: UID,
  runAsGroup: UID,
  fsGroup: UID,
  fsGroupChangePolicy: 'OnRootMismatch',
  seccompProfile: { type: 'RuntimeDefault' },
};

/** Requests = limits (Guaranteed QoS): whole cores are exclusive under the static CPU manager. */
function resources(cpu, memory) {
  return { requests: { cpu, memory }, limits: { cpu, memory } };
}

/** /results (the shared volume) and a writable /tmp, which is also HOME (tokenizer cache). */
function baseVolumes(common) {
  return {
    volumes: [
      { name: 'results', persistentVolumeClaim: { claimName: common.pvc } },
      { name: 'tmp', emptyDir: { sizeLimit: '2Gi' } },
    ],
    mounts: [
      { name: 'results', mountPath: RESULTS_DIR },
      { name: 'tmp', mountPath: '/tmp' },
    ],
  };
}

/** A tokenload container and its pod spec, restartPolicy Never. */
function podSpec(common, { args, env = [], size, volumes = [], mounts = [], affinity, command, graceS }) {
  const base = baseVolumes(common);
  const container = {
    name: 'tokenload',
    image: common.image,
    ...(command === undefined ? {} : { command }),
    ...(args === undefined ? {} : { args }),
    env: [{ name: 'HOME', value: '/tmp' }, ...env],
    resources: resources(size.cpu, size.memory),
    securityContext: CONTAINER_SECURITY,
    volumeMounts: [...base.mounts, ...mounts],
  };
  return {
    restartPolicy: 'Never',
    enableServiceLinks: false,
    terminationGracePeriodSeconds: graceS ?? TERMINATION_GRACE_S,
    securityContext: POD_SECURITY,
    ...(affinity === undefined ? {} : { affinity }),
    containers: [container],
    volumes: [...base.volumes, ...volumes],
  };
}

/** A Job of one pod that is never retried. */
function singleJob(common, name, component, spec) {
  const jobLabels = labels(common.instance, component);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: metadata(common, name, jobLabels),
    spec: { backoffLimit: 0, template: { metadata: { labels: jobLabels }, spec } },
  };
}

/** Shards on different nodes: `required` (the default) leaves a shard Pending rather than sharing a node. */
function antiAffinity(spread, instance) {
  const term = {
    labelSelector: { matchLabels: labels(instance, 'shard') },
    topologyKey: 'kubernetes.io/hostname',
  };
  if (spread === 'required')
    return { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } };
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: term }],
    },
  };
}

/** The shard container's arguments: the index from JOB_COMPLETION_INDEX, the shared start. */
function shardArgs(p) {
  const dir = `${RESULTS_DIR}/${p.run}`;
  return [
    'profile',
    '--model',
    p.model,
    '--url',
    p.url,
    '--input-file',
    p.trace.inputFile,
    '--custom-dataset-type',
    p.datasetType,
    '--workers',
    String(p.size.workers),
    '--shard-index',
    '$(JOB_COMPLETION_INDEX)',
    '--shard-count',
    String(p.shardCount),
    '--start-at',
    p.start.toISOString(),
    '--artifact-dir',
    `${dir}/shard-$(JOB_COMPLETION_INDEX)`,
    ...p.extra,
  ];
}

/** The shards' environment: the completion index through the downward API, HF_TOKEN when given. */
function shardEnv(p) {
  const env = [
    {
      name: 'JOB_COMPLETION_INDEX',
      valueFrom: {
        fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" },
      },
    },
  ];
  if (p.hfTokenSecret !== undefined) {
    env.push({ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: p.hfTokenSecret, key: 'HF_TOKEN' } } });
  }
  return env;
}

/**
 * The Indexed Job: one pod per shard, all at once (completions = parallelism = shard count); a
 * failed shard is never retried (backoffLimitPerIndex 0: a retry would start after --start-at) and
 * does not stop the others; a disrupted pod (eviction, preemption, drain) fails its index.
 */
function shardJob(common, p) {
  const jobLabels = labels(p.run, 'shard');
  const traceVolume =
    p.trace.configMap === undefined ? [] : [{ name: 'trace', configMap: { name: `${p.run}-trace` } }];
  const traceMount =
    traceVolume.length === 0 ? [] : [{ name: 'trace', mountPath: TRACE_DIR, readOnly: true }];
  const spec = podSpec(common, {
    args: shardArgs(p),
    env: shardEnv(p),
    size: p.size,
    volumes: traceVolume,
    mounts: traceMount,
    affinity: antiAffinity(p.spread, p.run),
  });
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: metadata(common, `${p.run}-shards`, jobLabels),
    spec: {
      completionMode: 'Indexed',
      completions: p.shardCount,
      parallelism: p.shardCount,
      backoffLimitPerIndex: 0,
      podFailurePolicy: {
        rules: [{ action: 'FailIndex', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }],
      },
      template: { metadata: { labels: jobLabels }, spec },
    },
  };
}

/** The trace ConfigMap (`--trace`), named after the run. */
function traceConfigMap(common, p) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadata(common, `${p.run}-trace`, labels(p.run, 'trace')),
    data: { [p.trace.configMap.key]: p.trace.configMap.text },
  };
}

// ---------------------------------------------------------------------------------------------
// Commands

function renderVolume(common, values) {
  const storageClass = values['storage-class'];
  const pvc = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: metadata(common, common.pvc, labels(common.instance, 'results')),
    spec: {
      accessModes: ['ReadWriteMany'],
      ...(storageClass === undefined ? {} : { storageClassName: storageClass }),
      resources: { requests: { storage: quantity('size', values.size) } },
    },
  };
  const helper = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: metadata(common, 'tokenload-helper', labels(common.instance, 'helper')),
    spec: podSpec(common, {
      command: ['sleep', 'infinity'],
      size: { cpu: '100m', memory: '128Mi' },
      graceS: 1,
    }),
  };
  return { objects: [pvc, helper] };
}

function renderCalibrate(common, values) {
  const size = podSize(values);
  const args = ['calibrate', '--workers', String(size.workers)];
  const job = singleJob(common, 'tokenload-calibrate', 'calibrate', podSpec(common, { args, size }));
  return { objects: [job] };
}

/**
 * Checks the shards' `tokenload profile` arguments (shard 0's: the index is the pods' own) with the
 * package's parser, as a pod would parse them.
 * @throws {UsageError} with the parser's message (which names the flag), or when PROFILE_ARGS are
 *   given and the built package does not load.
 */
async function checkProfileArgs(p) {
  let parseProfileArgs;
  try {
    ({ parseProfileArgs } = await import(PACKAGE_ENTRY.href));
  } catch (err) {
    if (p.extra.length === 0) return;
    throw new UsageError(
      `the profile flags after -- cannot be checked: the built package ${fileURLToPath(PACKAGE_ENTRY)} does not load (${err.message}); run npm ci in this checkout first`,
    );
  }
  const args = shardArgs(p)
    .slice(1)
    .map((a) => a.replaceAll('$(JOB_COMPLETION_INDEX)', '0'));
  try {
    parseProfileArgs(args);
  } catch (err) {
    if (typeof err?.code !== 'string' || !err.code.startsWith('E_')) throw err;
    throw new UsageError(`tokenload profile would refuse the shards' flags: ${err.message}`);
  }
  await checkTraceFormat(p);
}

/**
 * Checks a `--trace FILE`'s first row against `--custom-dataset-type` with the package's own check
 * (`tokenload profile` refuses the mix-up at start, in every pod). A trace on the volume is not
 * here to read: the pods check it.
 * @throws {UsageError} with the check's message (the file, line, fields and the type to give).
 */
async function checkTraceFormat(p) {
  if (p.trace.localFile === undefined) return;
  let checkDeclaredFormat;
  try {
    ({ checkDeclaredFormat } = await import(FORMAT_CHECK.href));
  } catch {
    return;
  }
  try {
    checkDeclaredFormat(p.trace.localFile, p.datasetType);
  } catch (err) {
    if (typeof err?.code !== 'string' || !err.code.startsWith('E_')) throw err;
    throw new UsageError(`tokenload profile would refuse the trace: ${err.message}`);
  }
}

async function renderShards(common, values, extra, nowMs) {
  const start = startTime(values, nowMs);
  const spread = values.spread;
  if (spread !== 'required' && spread !== 'preferred') {
    throw new UsageError(`--spread ${spread}: must be required or preferred`);
  }
  const p = {
    url: targetUrl(values),
    model: required(values, 'model'),
    datasetType: required(values, 'custom-dataset-type'),
    shardCount: wholeNumber('shard-count', values['shard-count'], 1),
    trace: traceSource(values),
    size: podSize(values),
    start,
    spread,
    run: runName(values, start),
    extra: profileArgs(extra),
    hfTokenSecret:
      values['hf-token-secret'] === undefined
        ? undefined
        : dnsName('hf-token-secret', values['hf-token-secret']),
  };
  await checkProfileArgs(p);
  const objects = p.trace.configMap === undefined ? [] : [traceConfigMap(common, p)];
  objects.push(shardJob({ ...common, instance: p.run }, p));
  const leadS = Math.round((start.getTime() - nowMs) / 1000);
  const note = [
    `run ${p.run}: ${p.shardCount} shard(s) start at ${start.toISOString()} (in ${leadS} s); results in ${RESULTS_DIR}/${p.run}/`,
    `check before the start that every shard is Running${spread === 'required' ? ', each on its own node' : ''}:`,
    `  kubectl get pods -n ${common.namespace} -l app.kubernetes.io/instance=${p.run} -o wide`,
    'when the Job is Complete (or Failed), merge:',
    `  node deploy/kubernetes/render.mjs merge --image ${common.image} --namespace ${common.namespace} --pvc ${common.pvc} --name ${p.run} --shard-count ${p.shardCount} | kubectl create -f -`,
  ];
  return { objects, note };
}

function renderMerge(common, values) {
  const run = dnsName('name', required(values, 'name'));
  const shardCount = wholeNumber('shard-count', values['shard-count'], 1);
  const dir = `${RESULTS_DIR}/${run}`;
  const shardDirs = Array.from({ length: shardCount }, (_, i) => `${dir}/shard-${i}`);
  const args = ['merge', ...shardDirs, '--artifact-dir', `${dir}/merged`];
  if (values['allow-partial']) args.push('--allow-partial');
  const size = { cpu: '1', memory: quantity('memory', values.memory) };
  const job = singleJob(
    { ...common, instance: run },
    `${run}-merge`,
    'merge',
    podSpec(common, { args, size }),
  );
  return { objects: [job] };
}

const COMMANDS = {
  volume: renderVolume,
  calibrate: renderCalibrate,
  shards: renderShards,
  merge: renderMerge,
};

// ---------------------------------------------------------------------------------------------
// YAML (JSON scalars in YAML block style: every string double-quoted, so nothing is reinterpreted)

const isLeaf = (v) =>
  v === null || typeof v !== 'object' || (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0);
/** A JSON string, with what YAML 1.1 reads as a line break or forbids raw (C1 controls, BOM) escaped. */
const quoted = (s) =>
  JSON.stringify(s).replace(
    /[\u007f-\u009f\u2028\u2029\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
const leaf = (v) => {
  if (Array.isArray(v)) return '[]';
  if (typeof v === 'string') return quoted(v);
  return typeof v === 'object' && v !== null ? '{}' : JSON.stringify(v);
};
/** A key plain when YAML 1.1 and 1.2 both read it as that string (not y, no, on, null, …). */
const yamlKey = (k) =>
  /^[A-Za-z_][-\w./]*$/.test(k) && !/^(y|yes|n|no|true|false|on|off|null)$/i.test(k) ? k : quoted(k);

function yamlBlock(value, pad) {
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      if (isLeaf(item)) return [`${pad}- ${leaf(item)}`];
      const [first, ...rest] = yamlBlock(item, `${pad}  `);
      return [`${pad}- ${first.trimStart()}`, ...rest];
    });
  }
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .flatMap(([k, v]) =>
      isLeaf(v) ? [`${pad}${yamlKey(k)}: ${leaf(v)}`] : [`${pad}${yamlKey(k)}:`, ...yamlBlock(v, `${pad}  `)],
    );
}

/** Multi-document YAML of Kubernetes objects. */
function toYaml(objects) {
  return objects.map((o) => `---\n${yamlBlock(o, '').join('\n')}\n`).join('');
}

// ---------------------------------------------------------------------------------------------
// Entry

/** The command, its option values (only the options it takes) and PROFILE_ARGS after `--`. */
function parseCommandLine(argv) {
  const cut = argv.indexOf('--');
  const extra = cut === -1 ? [] : argv.slice(cut + 1);
  let parsed;
  try {
    parsed = parseArgs({
      args: cut === -1 ? argv : argv.slice(0, cut),
      options: OPTIONS,
      allowPositionals: true,
      tokens: true,
    });
  } catch (err) {
    throw new UsageError(err.message);
  }
  const [command, ...stray] = parsed.positionals;
  if (command === undefined || !(command in COMMANDS)) {
    const what = command === undefined ? 'no command' : `unknown command ${command}`;
    throw new UsageError(`${what}: give volume, calibrate, shards or merge`);
  }
  if (stray.length > 0) throw new UsageError(`unexpected argument ${stray[0]} (profile flags go after --)`);
  if (extra.length > 0 && command !== 'shards')
    throw new UsageError(`${command} takes no arguments after --`);
  const takes = ['help', 'image', 'namespace', 'pvc', ...COMMAND_OPTIONS[command]];
  for (const token of parsed.tokens) {
    if (token.kind === 'option' && !takes.includes(token.name)) {
      throw new UsageError(`--${token.name}: not an option of ${command}`);
    }
  }
  return { command, values: parsed.values, extra };
}

/**
 * One command's objects (and a note for stderr) from the command line, at `nowMs`.
 * @throws {UsageError} naming the flag when a parameter is wrong.
 */
async function render(argv, nowMs) {
  const { command, values, extra } = parseCommandLine(argv);
  const image = required(values, 'image');
  if (/\s/.test(image)) throw new UsageError(`--image ${image}: contains spaces`);
  const common = {
    image,
    namespace: dnsName('namespace', values.namespace),
    pvc: dnsName('pvc', values.pvc),
    instance: 'tokenload',
  };
  return await COMMANDS[command](common, values, extra, nowMs);
}

async function main(argv) {
  const own = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  if (own.length === 0 || own.includes('--help') || own.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const { objects, note } = await render(argv, Date.now());
    process.stdout.write(toYaml(objects));
    if (note !== undefined) process.stderr.write(`${note.join('\n')}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`render.mjs: error: ${err.message}\n(node deploy/kubernetes/render.mjs --help)\n`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
