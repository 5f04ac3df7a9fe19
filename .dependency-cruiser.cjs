/**
 * The layering guard (`npm run lint` runs it): no circles, type imports included, and no import that
 * runs back up the pipeline. LAYERS lists the folders of `src/` from the ground up; a module may
 * import only from layers below its own, never from a sibling in its own layer or from one above.
 * A new folder must be placed here, or the `unplaced-folder` rule fails.
 */
const LAYERS = [
  ['errors.ts'],
  ['util'],
  ['dataset'],
  ['prompt'],
  ['timing'],
  ['record'],
  ['endpoint'],
  ['client'],
  ['metrics'],
  ['export'],
  ['simulator'],
  ['server-metrics'],
  ['config'],
  ['request'],
  ['preflight', 'health', 'shard'],
  ['analyze', 'report'],
  ['run'],
  ['probe', 'merge', 'search'],
  ['cli'],
  ['index.ts'],
];

/** Modules loaded by path, not imported: the package entry, the CLI, worker threads and the simulator's child. */
const ENTRY_POINTS = [
  '^src/index\\.ts$',
  '^src/cli/main\\.ts$',
  '^src/client/worker-entry\\.ts$',
  '^src/server-metrics/scrape-worker\\.ts$',
  '^src/simulator/child\\.ts$',
  '^src/timing/wake-thread\\.ts$',
].join('|');

const pathOf = (name) => (name.endsWith('.ts') ? `^src/${name.replace('.', '\\.')}$` : `^src/${name}/`);
const anyOf = (names) => `(${names.map(pathOf).join('|')})`;

const layerRules = LAYERS.flatMap((layer, i) => {
  const above = LAYERS.slice(i + 1).flat();
  return layer.flatMap((name) => {
    const forbidden = [...above, ...layer.filter((n) => n !== name)];
    return forbidden.length === 0
      ? []
      : [
          {
            name: `layer-${name.replace('.ts', '')}`,
            comment: `src/${name} may import only from the layers below it (.dependency-cruiser.cjs LAYERS)`,
            severity: 'error',
            from: { path: pathOf(name) },
            to: { path: anyOf(forbidden) },
          },
        ];
  });
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'modules that import each other, directly or through others (type imports count)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'unplaced-folder',
      comment: 'every module of src/ belongs to a layer of LAYERS',
      severity: 'error',
      from: { path: '^src/', pathNot: anyOf(LAYERS.flat()) },
      to: {},
    },
    {
      name: 'src-not-to-tests',
      comment: 'the library never imports its tests, benchmarks or scripts',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'src-not-to-dev-dependencies',
      comment: 'the published library must not need a devDependency',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'no-dead-modules',
      comment:
        'every module of src/ is reachable from an entry point: the package, the CLI, or a thread or child process started by path',
      severity: 'error',
      from: { path: ENTRY_POINTS },
      to: { path: '^src/', pathNot: ENTRY_POINTS, reachable: false },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js'],
    },
  },
};
