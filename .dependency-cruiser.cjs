/**
 * The layering of src/ (docs/architecture.md), enforced by `npm run lint`:
 *   core < api < strategy, store < market < config < obs < backtest | bot < cli
 * A module imports only from its own layer or below; backtest and bot are siblings and never
 * import each other; no import cycle anywhere; the pure layers do no file or network IO.
 * Inside src/backtest and src/bot the folders are layered the same way (their READMEs).
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

/** src/backtest's folders, lowest first (src/backtest/README.md). */
const BACKTEST = [['snapshot', 'path'], ['world'], ['report'], ['run'], ['optimize', 'calibrate']];
/** src/bot's folders, lowest first; '.' is the files directly in src/bot (src/bot/README.md). */
const BOT = [['common'], ['spending'], ['doubt'], ['selling'], ['buying'], ['account'], ['views'], ['.']];

const folder = (root, name) => (name === '.' ? `^src/${root}/[^/]+$` : `^src/${root}/${name}/`);
const folderRules = (root, order) =>
  order.flatMap((names, i) =>
    names
      .filter(() => i < order.length - 1)
      .map((name) => ({
        name: `${root}-${name === '.' ? 'top' : name}`,
        comment: `src/${root}/${name === '.' ? '' : `${name}/`} may import only its own folder or those below it (${order
          .slice(0, i + 1)
          .flat()
          .join(', ')})`,
        severity: 'error',
        from: { path: folder(root, name) },
        to: {
          path: order
            .slice(i + 1)
            .flat()
            .map((n) => folder(root, n))
            .join('|'),
        },
      })),
  );

module.exports = {
  forbidden: [
    ...layerRules,
    ...folderRules('backtest', BACKTEST),
    ...folderRules('bot', BOT),
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
