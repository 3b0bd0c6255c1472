/**
 * The layering of src/ (docs/architecture.md), enforced by `npm run lint`:
 *   core < api < strategy, store < market < config < obs < backtest | bot < cli
 * A module imports only from its own layer or below; backtest and bot are siblings and never
 * import each other; no import cycle anywhere; the pure layers do no file or network IO.
 */
const ORDER = [
  ['core'],
  ['api'],
  ['strategy', 'store'],
  ['market'],
  ['config'],
  ['obs'],
  ['backtest', 'bot'],
  ['cli'],
];

const above = (i) => ORDER.slice(i + 1).flat();
const layerRules = ORDER.flatMap((layers, i) =>
  layers
    .filter(() => above(i).length > 0)
    .map((layer) => ({
      name: `layer-${layer}`,
      comment: `src/${layer} may import only its own layer or those below it (${ORDER.slice(0, i + 1)
        .flat()
        .join(', ')})`,
      severity: 'error',
      from: { path: `^src/${layer}/` },
      to: { path: `^src/(${above(i).join('|')})/` },
    })),
);

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'siblings-bot-backtest',
      comment: 'backtest and bot share a layer but never import each other (both replay src/strategy)',
      severity: 'error',
      from: { path: '^src/(bot|backtest)/' },
      to: { path: '^src/(bot|backtest)/', pathNot: '^src/$1/' },
    },
    {
      name: 'no-circular',
      comment: 'an import cycle couples modules that should be layered',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'pure-core',
      comment:
        'src/core, src/api schemas and src/strategy are pure: no file system, process or network modules',
      severity: 'error',
      from: { path: '^src/(strategy|core)/' },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(fs|fs/promises|child_process|net|http|https|worker_threads)$',
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
