// Module boundaries, read from each project's tags (project.json) when this config loads, so a new project is
// covered by adding its project.json. Each rule here has a fixture in tools/lint/fixtures that must fail it
// (tools/lint/lint-rules.spec.ts).
//
// - Pure libs (type:domain, type:schema, type:contract): no Node built-in, no framework, no I/O client
//   (no-restricted-imports; Nx's own bannedExternalImports never sees Node built-ins).
// - Test doubles live in type:testing projects (libs/<lib>/testing, imported as @rx/<lib>/testing): only tests and
//   tools may import them; production files may not reach a testing/ folder either.
// - type: tags say which kind of project may use which; scope: tags say which area may use which (no lib may
//   use an app's scope, shared libs use only shared ones). Apps and tools are imported by no one, except an app's
//   deliberate public entry (apps/<app>/src/public-api.ts, @rx/<app>) by tools.
// - Production files may not import devDependencies.
const fs = require('node:fs');
const path = require('node:path');
const { builtinModules } = require('node:module');
const nx = require('@nx/eslint-plugin');
const tseslint = require('typescript-eslint');

const ROOT = __dirname;

/** every project under apps/, libs/ (a lib's testing/ project too) and tools/: name, root and tags */
function readProjects() {
  const projects = [];
  const visit = (dir, depth) => {
    const file = path.join(ROOT, dir, 'project.json');
    if (fs.existsSync(file)) {
      const json = JSON.parse(fs.readFileSync(file, 'utf8'));
      projects.push({ name: json.name, root: dir, tags: json.tags ?? [] });
    }
    if (depth === 0) return;
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      if (entry.isDirectory() && !['node_modules', 'src'].includes(entry.name)) visit(`${dir}/${entry.name}`, depth - 1);
    }
  };
  for (const top of ['apps', 'libs', 'tools']) visit(top, 2);
  return projects;
}

const projects = readProjects();
const tagged = (tag) => projects.filter((p) => p.tags.includes(tag));
const scopesOf = (list) => [...new Set(list.flatMap((p) => p.tags.filter((t) => t.startsWith('scope:'))))];
/** the .ts files of a project, less those of projects nested in it (a lib's testing/) */
const filesOf = (list) => ({
  files: list.map((p) => `${p.root}/**/*.ts`),
  ignores: projects.filter((n) => list.some((p) => n.root.startsWith(`${p.root}/`))).map((n) => `${n.root}/**`),
});

// Tests, test support and tools: the only files that may import a type:testing project or a testing/ folder.
const TEST_FILES = [
  '**/*.spec.ts',
  '**/*.int-spec.ts',
  '**/*.acceptance.ts',
  '**/*.browser.ts',
  '**/*.e2e*.ts',
  '**/testing/**/*.ts',
  'tools/**/*.ts',
  'apps/pipeline-e2e/**/*.ts',
];

// --- type: which kind of project may use which ----------------------------------------------------------------
const LIBS_FOR = {
  'type:domain': ['type:domain'],
  'type:schema': ['type:domain', 'type:schema'],
  'type:contract': ['type:domain', 'type:schema', 'type:contract'],
  'type:backend': ['type:domain', 'type:schema', 'type:backend', 'type:infra'],
  'type:infra': ['type:domain', 'type:schema', 'type:contract', 'type:infra'],
  'type:stage': ['type:domain', 'type:schema', 'type:contract', 'type:backend', 'type:infra'],
  // the read-only run tools (libs/run-tools): a run directory's files and the pipeline's pure helpers
  'type:run': ['type:domain', 'type:schema', 'type:contract', 'type:backend', 'type:infra', 'type:stage'],
  // the pipeline's transport and stores on BullMQ and Redis (libs/queue): the stage lib's interfaces, implemented
  'type:queue': ['type:domain', 'type:schema', 'type:contract', 'type:backend', 'type:infra', 'type:stage'],
  'type:host': ['type:domain', 'type:schema', 'type:contract', 'type:backend', 'type:infra', 'type:stage', 'type:queue'],
  'type:app': ['type:domain', 'type:schema', 'type:contract', 'type:backend', 'type:infra', 'type:stage', 'type:queue', 'type:host', 'type:run'],
  // a lib's doubles use that lib and what it uses, and other doubles
  'type:testing': ['type:domain', 'type:schema', 'type:contract', 'type:backend', 'type:infra', 'type:stage', 'type:queue', 'type:host', 'type:run', 'type:testing'],
  // apps are reached only through their public entries, allowed below for tools alone
  'type:tool': ['type:domain', 'type:schema', 'type:contract', 'type:backend', 'type:infra', 'type:stage', 'type:queue', 'type:host', 'type:run', 'type:testing', 'type:tool'],
};

// --- scope: which area may use which --------------------------------------------------------------------------
const libScopes = scopesOf(projects.filter((p) => p.root.startsWith('libs/')));
const LIB_SCOPE_USES = {
  'scope:shared': ['scope:shared'],
  'scope:backend': ['scope:shared', 'scope:backend'],
  'scope:pipeline': ['scope:shared', 'scope:backend', 'scope:pipeline'],
  'scope:run': ['scope:shared', 'scope:pipeline', 'scope:run'],
  'scope:report': ['scope:shared', 'scope:pipeline', 'scope:run', 'scope:report'],
};
// a lib scope not listed above may use any lib scope (never an app's); an app's scope, every lib scope and its own
const scopeUses = (scope) =>
  LIB_SCOPE_USES[scope] ?? (libScopes.includes(scope) ? libScopes : [...libScopes, scope]);
const scopeConstraints = [
  ...scopesOf(projects.filter((p) => p.root !== 'tools')).map((scope) => ({ sourceTag: scope, onlyDependOnLibsWithTags: scopeUses(scope) })),
  { sourceTag: 'scope:tools', onlyDependOnLibsWithTags: ['*'] },
];

// --- production files may not import devDependencies (parse-prometheus-text-format, fast-check, jest, ...) -------
const devDependencies = Object.keys(require('./package.json').devDependencies ?? {}).filter((d) => !d.startsWith('@types/'));

function boundaries({ tests, tools }) {
  const typeConstraints = Object.entries(LIBS_FOR).map(([sourceTag, libs]) => ({
    sourceTag,
    onlyDependOnLibsWithTags: tests && !libs.includes('type:testing') ? [...libs, 'type:testing'] : libs,
  }));
  return [
    'error',
    {
      // an app's public entry, for tools only
      allow: tools ? tagged('type:app').map((p) => `@rx/${p.name}`) : [],
      // the policy server loads the embedded model lazily in production; its tests import it statically
      checkDynamicDependenciesExceptions: ['@rx/embedded-model'],
      // a lib's own tests use its doubles, which use the lib: the one cycle allowed
      ignoredCircularDependencies: projects
        .filter((p) => p.tags.includes('type:testing'))
        .map((p) => [projects.find((lib) => p.root.startsWith(`${lib.root}/`))?.name, p.name])
        .filter(([lib]) => lib !== undefined),
      depConstraints: [
        ...typeConstraints,
        ...scopeConstraints,
        ...(tests || tools ? [] : [{ sourceTag: '*', bannedExternalImports: devDependencies }]),
      ],
    },
  ];
}

// --- no-restricted-imports: purity of pure libs, and no testing/ folder from production files ---------------------
const builtins = builtinModules.filter((m) => !m.startsWith('_'));
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const TESTING_FOLDER = {
  regex: '^(\\.{1,2}/(.*/)?testing(/.*)?|@nestjs/testing)$',
  message: 'test support (a testing/ folder) is for tests only (*.spec.ts, *.int-spec.ts, ...); production code may not import it.',
};
const PURE = [
  {
    regex: `^(node:.*|(${builtins.map(escape).join('|')})(/.*)?)$`,
    message: 'a pure lib (type:domain, type:schema, type:contract) imports no Node built-in: take the value as a parameter, or move the I/O to an infra lib or an app.',
  },
  {
    regex: '^(@nestjs/.*|@tensorflow/.*|(bullmq|ioredis|prom-client|express)(/.*)?)$',
    message: 'a pure lib (type:domain, type:schema, type:contract) imports no framework, queue, Redis, metrics or HTTP client; those belong to infra libs, hosts and apps.',
  },
];
// libs/pipeline (the graph, its edge runner and stage functions) does no I/O of its own: files, sockets, processes,
// queues and Redis are reached only through the interfaces its services hand it (ledger, windows, producer, backend)
const NO_IO = [
  {
    regex: '^(node:)?(fs|net|http|https|http2|tls|dgram|dns|child_process|cluster|worker_threads|readline)(/.*)?$',
    message: 'libs/pipeline does no I/O (files, sockets, processes): take an interface in StageDeps and implement it in libs/queue or an app.',
  },
  {
    regex: '^(@nestjs/.*|(bullmq|ioredis|express)(/.*)?)$',
    message: 'libs/pipeline does no I/O (no framework, queue or Redis client): libs/queue and libs/service-host run the graph on those.',
  },
];
const pipelineFiles = { files: ['libs/pipeline/src/**/*.ts'] };

const pureProjects = projects.filter((p) => p.tags.some((t) => ['type:domain', 'type:schema', 'type:contract'].includes(t)));
const pureFiles = filesOf(pureProjects);

module.exports = [
  { ignores: ['**/node_modules/**', 'dist/**', 'runs/**', 'tmp/**', '**/*.js'] },
  ...(tseslint.configs.base ? [tseslint.configs.base] : []),
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': boundaries({ tests: false, tools: false }),
      'no-restricted-imports': ['error', { patterns: [TESTING_FOLDER] }],
    },
  },
  {
    files: pureFiles.files,
    ignores: [...pureFiles.ignores, ...TEST_FILES],
    rules: {
      'no-restricted-imports': ['error', { patterns: [...PURE, TESTING_FOLDER] }],
      // the way around an import declaration, closed: a pure lib loads no module at run time
      'no-restricted-syntax': ['error', ...['CallExpression[callee.name="require"]', 'ImportExpression'].map((selector) => ({
        selector,
        message: 'a pure lib (type:domain, type:schema, type:contract) loads modules only by import declarations (require() and import() would pass the purity check by).',
      }))],
    },
  },
  {
    files: pipelineFiles.files,
    ignores: TEST_FILES,
    rules: { 'no-restricted-imports': ['error', { patterns: [...NO_IO, TESTING_FOLDER] }] },
  },
  {
    files: TEST_FILES,
    rules: {
      '@nx/enforce-module-boundaries': boundaries({ tests: true, tools: false }),
      'no-restricted-imports': 'off',
    },
  },
  {
    files: ['tools/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries({ tests: true, tools: true }) },
  },
];
