# One image for every rx service. The role is chosen at start: RX_ROLE=<app> runs apps/<app>/src/main.ts
# (policy-server, sampler, grader, advantage, trainer, controller); a command (`rx run ...`) runs that instead.
# The services run their TypeScript sources through swc-node (tools/register.js), so the runtime keeps swc and
# typescript (swc-node reads the tsconfig with it) and drops the rest of the dev tooling.
#
#   docker build -t rx .
#   docker run --rm -e RX_ROLE=grader -e REDIS_URL=redis://:pw@redis:6379 rx
#   docker run --rm rx rx --help
#
# Needs Docker Engine 23 or later with BuildKit (the buildx plugin), which builds the heredocs, `COPY --chmod` and
# `RUN --mount=type=cache` below without fetching a `# syntax=` frontend image: the only images a build pulls are
# its bases (NODE_IMAGE). Tested with Engine 26.1 and buildx 0.13 (docs/deploy.md).

ARG NODE_IMAGE=node:20-bookworm-slim

# --- 1. deps: the exact lockfile install ------------------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund

# --- 2. prune: keep dependencies plus the dev packages the services load at runtime ---------------------------
FROM deps AS prune
# Dev dependencies the running services need: swc-node and swc (run .ts), typescript (read by swc-node),
# bull-board (the controller's /queues UI) and chart.js (inlined into report.html by `rx report`).
ARG RUNTIME_DEV_DEPS="@swc-node/register @swc/core typescript @bull-board/api @bull-board/express chart.js"
RUN node -e " \
      const fs = require('node:fs'); \
      const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')); \
      for (const name of process.argv.slice(1)) { \
        const version = pkg.devDependencies[name] ?? pkg.dependencies[name]; \
        if (!version) { console.error('Dockerfile: ' + name + ' is in RUNTIME_DEV_DEPS but not in package.json'); process.exit(1); } \
        pkg.dependencies[name] = version; delete pkg.devDependencies[name]; \
      } \
      fs.writeFileSync('package.json', JSON.stringify(pkg, null, 2)); \
    " ${RUNTIME_DEV_DEPS} \
 && npm prune --omit=dev --offline --no-audit --no-fund \
 && rm -rf node_modules/.cache

# --- 3. runtime: slim base, sources and pruned node_modules owned by root, run as the unprivileged `node` -----
FROM ${NODE_IMAGE} AS runtime
# @swc/core unpacks its native addon into a cache on first load and loads it from there: that cache must be writable,
# on a filesystem that allows exec, owned by this user with no ancestor others may write. The root is read-only in
# compose and Kubernetes and Docker's /tmp tmpfs is noexec, so the default (~/.cache, else $TMPDIR) fails with
# ERR_SWC_NATIVE_CACHE; the data volume (/data, owned by node) qualifies. Kubernetes sets its own (k8s/base).
ENV NODE_ENV=production \
    RX_HOME=/app \
    RX_DATA_DIR=/data \
    SWC_NODE_CACHE_DIR=/tmp/swc-node \
    SWC_NATIVE_BINDING_CACHE=/data/.swc-native
WORKDIR /app
COPY --from=prune /app/node_modules ./node_modules
# The whole source tree as the repo has it (apps, libs, tools, specs, models, root manifests; .dockerignore drops
# installs, runs, secrets and VCS data), so a run record's source hash in the image equals the checkout's.
COPY . .

# rx-entrypoint: with arguments, run them (`rx run ...`); without, start the app named by RX_ROLE.
COPY --chmod=755 <<'EOF' /usr/local/bin/rx-entrypoint
#!/bin/sh
set -eu
home="${RX_HOME:-/app}"
if [ "$#" -gt 0 ]; then exec "$@"; fi
apps="$(cd "$home/apps" && for d in *; do if [ -f "$d/src/main.ts" ]; then printf '%s ' "$d"; fi; done)"
role="${RX_ROLE:-}"
case "$role" in
  "" | */* | .*)
    echo "rx-entrypoint: set RX_ROLE to the app to run, one of: $apps(or pass a command, e.g. rx --help)" >&2
    exit 2 ;;
esac
if [ ! -f "$home/apps/$role/src/main.ts" ]; then
  echo "rx-entrypoint: RX_ROLE='$role' is not an app in apps/; set it to one of: $apps" >&2
  exit 2
fi
cd "$home"
exec node -r ./tools/register.js "apps/$role/src/main.ts"
EOF

# rx: the command line, from anywhere in the container.
COPY --chmod=755 <<'EOF' /usr/local/bin/rx
#!/bin/sh
home="${RX_HOME:-/app}"
exec node -r "$home/tools/register.js" "$home/apps/cli/src/main.ts" "$@"
EOF

RUN mkdir -p /data /tmp/swc-node && chown node:node /data /tmp/swc-node
VOLUME ["/data"]
USER node
EXPOSE 8000 3100 3101 3102 3103 3104

# Every service answers GET /health on $PORT (a probe starts Node: 3 s was too short on a loaded 2-core machine).
HEALTHCHECK --interval=15s --timeout=10s --start-period=40s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["rx-entrypoint"]
