#!/usr/bin/env bash
# CI: `docker compose up` for real, on a Debian 12 machine with no Docker and no image registry (root; Debian's
# mirror and the npm registry reachable). Fails when the image does not build, when a role does not start under a
# read-only root, when a service of the stack is not healthy, when the controller's run does not end with exit 0,
# or when `rx check-record` fails the record the stack wrote.
#
#   .ci/compose-stack.sh prepare   engine packages and the base root filesystem (no engine started): what .ci/run
#                                  starts in the background early
#   .ci/compose-stack.sh run       prepare (what is not done yet), then its own dockerd, the stand-in images, the rx
#                                  image, the read-only smoke of every role, the stack and its record, `down -v`;
#                                  stops the dockerd it started, by PID, however it ends
#   .ci/compose-stack.sh clean     removes $RX_COMPOSE_WORK (after an interrupted prepare)
#
# Everything lives in $RX_COMPOSE_WORK (default: a new /tmp/rx-compose-stack.XXXXXX; `run` deletes it at the end):
# - Docker Engine 26.1, compose 2.26 and buildx 0.13 are Debian 13's packages, and containerd, runc, iptables and
#   debootstrap Debian 12's, fetched with `apt-get download` against a private apt state (the machine's own apt
#   state, sources and installed packages are not touched) and unpacked with `dpkg -x`: nothing is installed.
# - No image can be pulled, so the pinned base images are STAND-INS built here under the pinned names
#   (.ci/compose-stack/*.Dockerfile): debian:bookworm-slim is a `debootstrap --variant=minbase bookworm` root;
#   node:20-bookworm-slim is that with this machine's Node 20 and npm; redis:7.4-alpine and prom/prometheus:v2.55.1
#   are Debian 12's redis-server and prometheus. Grafana has neither an image nor a Debian package here: it is left
#   out with a profile (.ci/compose-stack/compose.ci.yml). docs/deploy.md says what this proves and what it does not.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
here="$repo/.ci/compose-stack"

mode="${1:-run}"
case "$mode" in prepare | run | clean) ;; *) echo "usage: .ci/compose-stack.sh prepare|run|clean" >&2; exit 2 ;; esac

unmount_under() {
  local m
  for m in $(awk -v w="$1/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
}

work="${RX_COMPOSE_WORK:-}"
if [ "$mode" = clean ]; then
  # what an interrupted prepare leaves (debootstrap's /proc mount, the directory)
  if [ -n "$work" ]; then unmount_under "$work"; rm -rf "$work" "$work.prepare.log"; fi
  exit 0
fi
if [ -z "$work" ]; then work="$(mktemp -d /tmp/rx-compose-stack.XXXXXX)"; fi
mkdir -p "$work"
mirror="${RX_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
root="$work/root"       # the unpacked packages
rootfs="$work/rootfs"   # the debootstrapped base
started=$SECONDS
say() { printf 'compose-stack: %s (%ss)\n' "$*" "$((SECONDS - started))"; }
die() { printf 'compose-stack: FAIL: %s\n' "$*" >&2; exit 1; }

# --- prepare ---------------------------------------------------------------------------------------------------------

# apt-get with a private state (lists, cache, an empty status) and a sources list naming one suite.
apt_private() {
  local suite="$1"; shift
  local d="$work/apt-$suite"
  apt-get -q -o Dir::State="$d/state" -o Dir::State::status="$d/status" -o Dir::Cache="$d/cache" \
    -o Dir::Etc::sourcelist="$d/sources.list" -o Dir::Etc::sourceparts=- -o Debug::NoLocking=1 \
    -o APT::Sandbox::User=root "$@"
}

download_unpack() {
  local suite="$1"; shift
  local d="$work/apt-$suite"
  rm -rf "$d" && mkdir -p "$d/state/lists/partial" "$d/cache/archives/partial" "$d/debs"
  : >"$d/status"
  echo "deb [signed-by=$keyring] $mirror $suite main" >"$d/sources.list"
  apt_private "$suite" update >"$d/update.log" 2>&1 || { cat "$d/update.log" >&2; die "apt-get update ($suite) against $mirror"; }
  (cd "$d/debs" && apt_private "$suite" download "$@" >"$d/download.log" 2>&1) || { cat "$d/download.log" >&2; die "apt-get download ($suite) $*"; }
  local n; n="$(find "$d/debs" -name '*.deb' | wc -l)"
  [ "$n" -eq "$#" ] || die "apt-get download ($suite): $n of $# packages"
  for deb in "$d/debs"/*.deb; do dpkg -x "$deb" "$root"; done
}

prepare_packages() {
  if [ -f "$root/.done" ]; then return; fi
  rm -rf "$root" && mkdir -p "$root"
  download_unpack trixie docker.io docker-cli docker-compose docker-buildx
  download_unpack bookworm containerd runc iptables libip4tc2 libip6tc2 libxtables12 libnftnl11 libmnl0 \
    libnetfilter-conntrack3 libnfnetlink0 debootstrap
  mkdir -p "$root/bin"
  for t in iptables ip6tables; do ln -sf ../usr/sbin/xtables-nft-multi "$root/bin/$t"; done
  touch "$root/.done"
  say "engine packages unpacked: $(ls "$work"/apt-*/debs | grep -c '\.deb$') debs"
}

prepare_rootfs() {
  if [ -f "$rootfs.done" ]; then return; fi
  unmount_under "$rootfs"
  rm -rf "$rootfs"
  DEBOOTSTRAP_DIR="$root/usr/share/debootstrap" "$root/usr/sbin/debootstrap" --variant=minbase bookworm "$rootfs" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { unmount_under "$rootfs"; tail -30 "$work/debootstrap.log" >&2; die "debootstrap"; }
  unmount_under "$rootfs"
  # what an image's root does not carry: downloaded .debs, apt lists; and no service starts during a build
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d" && chmod 755 "$rootfs/usr/sbin/policy-rc.d"
  [ -x "$rootfs/usr/bin/apt-get" ] && [ -x "$rootfs/bin/sh" ] || die "debootstrap left no apt-get or sh in $rootfs"
  touch "$rootfs.done"
  say "base root filesystem debootstrapped ($(du -sm "$rootfs" | cut -f1) MB)"
}

# --- run: our own dockerd ------------------------------------------------------------------------------------------

engine_env() {
  export PATH="$root/usr/bin:$root/usr/sbin:$root/bin:$PATH"
  export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export XTABLES_LIBDIR="$root/usr/lib/x86_64-linux-gnu/xtables"
  engine="$work/engine"
  mkdir -p "$engine/data" "$engine/exec" "$engine/config/cli-plugins"
  echo '{}' >"$engine/daemon.json"
  ln -sf "$root/usr/libexec/docker/cli-plugins/docker-compose" "$root/usr/libexec/docker/cli-plugins/docker-buildx" "$engine/config/cli-plugins/"
  export DOCKER_HOST="unix://$engine/docker.sock" DOCKER_CONFIG="$engine/config"
  compose=(docker compose -f docker-compose.yml -f "$here/compose.ci.yml" --env-file "$work/stack.env")
}

dockerd_pid=""
stack_up=""
cleanup() {
  local rc=$?
  set +e
  if [ -n "$stack_up" ]; then
    if [ "$rc" -ne 0 ]; then
      echo "compose-stack: the stack at the failure:" >&2
      "${compose[@]}" ps -a >&2
      "${compose[@]}" logs --no-color --tail 40 >&2
      local c
      for c in $("${compose[@]}" ps -aq); do
        docker inspect -f '{{.Name}} health {{if .State.Health}}{{.State.Health.Status}}{{range .State.Health.Log}}
  {{.Start}} exit {{.ExitCode}}: {{.Output}}{{end}}{{end}}' "$c" >&2
      done
    fi
    timeout 120 "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1
  fi
  docker ps -aq 2>/dev/null | xargs -r docker rm -fv >/dev/null 2>&1
  docker network prune -f >/dev/null 2>&1
  if [ -n "$dockerd_pid" ] && kill -0 "$dockerd_pid" 2>/dev/null; then
    kill -TERM "$dockerd_pid"
    for _ in $(seq 1 60); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$dockerd_pid" 2>/dev/null; then
      kill -KILL "$dockerd_pid"
      local c; c="$(cat "$engine/exec/containerd/containerd.pid" 2>/dev/null)"
      [ -n "$c" ] && kill -KILL "$c" 2>/dev/null
    fi
  fi
  unmount_under "$work"
  if [ -z "${RX_COMPOSE_KEEP:-}" ]; then rm -rf "$work"; fi
  say "dockerd $dockerd_pid stopped; $( [ "$rc" -eq 0 ] && echo passed || echo "FAILED (exit $rc)")"
  exit "$rc"
}

start_engine() {
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  dockerd --config-file "$engine/daemon.json" --data-root "$engine/data" --exec-root "$engine/exec" \
    --pidfile "$engine/dockerd.pid" -H "$DOCKER_HOST" --userland-proxy-path "$root/usr/sbin/docker-proxy" \
    >"$work/dockerd.log" 2>&1 </dev/null &
  dockerd_pid=$!
  for _ in $(seq 1 120); do docker version >/dev/null 2>&1 && break; kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.5; done
  docker version >/dev/null 2>&1 || { tail -30 "$work/dockerd.log" >&2; die "dockerd did not start"; }
  say "dockerd $dockerd_pid: engine $(docker version --format '{{.Server.Version}}'), $(docker compose version --short 2>/dev/null | sed 's/^/compose /'), $(docker buildx version | awk '{print "buildx " $2}')"
}

# --- stand-in base images under the pinned names -----------------------------------------------------------------

build_stand_in() {
  local name="$1" file="$2" ctx="$3"
  docker build -q -t "$name" -f "$here/$file" "$ctx" >/dev/null 2>"$work/build-$file.log" || { cat "$work/build-$file.log" >&2; die "stand-in $name"; }
}

build_stand_ins() {
  tar -C "$rootfs" -c . | docker import - debian:bookworm-slim >/dev/null
  node_ctx="$work/node-context"
  rm -rf "$node_ctx" && mkdir -p "$node_ctx"
  cp "$(readlink -f "$(command -v node)")" "$node_ctx/node"
  cp -a "$(npm root -g)/npm" "$node_ctx/npm"
  cp /etc/ssl/certs/ca-certificates.crt "$node_ctx/"
  "$node_ctx/node" -e 'process.exit(Number(process.versions.node.split(".")[0]) === 20 ? 0 : 1)' || die "this machine's node is $(node --version), the stand-in needs Node 20"
  build_stand_in node:20-bookworm-slim node.Dockerfile "$node_ctx"
  build_stand_in redis:7.4-alpine redis.Dockerfile "$here"
  build_stand_in prom/prometheus:v2.55.1 prometheus.Dockerfile "$here"
  say "stand-in images: debian:bookworm-slim node:20-bookworm-slim redis:7.4-alpine prom/prometheus:v2.55.1"
}

# --- the rx image, as docker compose builds it -------------------------------------------------------------------

build_rx() {
  {
    echo "REDIS_PASSWORD=$(openssl rand -hex 24)"
    echo "RX_POLICY_API_KEY=$(openssl rand -hex 24)"
    echo "GRAFANA_ADMIN_PASSWORD=$(openssl rand -hex 24)"
  } >"$work/stack.env"
  "${compose[@]}" build controller >"$work/build-rx.log" 2>&1 || { tail -40 "$work/build-rx.log" >&2; die "docker compose build (the rx image)"; }
  say "rx image built: $(docker image ls rx:local --format '{{.Repository}}:{{.Tag}} {{.Size}}')"
}

smoke_role() {
  local role="$1" port="$2"; shift 2
  docker run -d --name "smoke-$role" --network "$smoke_net" --network-alias "$role" --read-only --tmpfs /tmp \
    --cap-drop ALL --security-opt no-new-privileges:true -e RX_ROLE="$role" -e PORT="$port" "$@" rx:local >/dev/null
}
# /health answers 200 once the role's Redis and backend answer; a role that died (ERR_SWC_NATIVE_CACHE) never does
smoke_wait() {
  local role="$1" port="$2"
  for _ in $(seq 1 90); do
    if [ "$(docker inspect -f '{{.State.Running}}' "smoke-$role")" != true ]; then
      docker logs --tail 30 "smoke-$role" >&2; die "smoke: $role exited (code $(docker inspect -f '{{.State.ExitCode}}' "smoke-$role")) under --read-only --tmpfs /tmp"
    fi
    if docker exec "smoke-$role" node -e "fetch('http://127.0.0.1:$port/health').then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))" 2>/dev/null; then
      say "smoke: $role answers /health 200 with --read-only --tmpfs /tmp"
      return
    fi
    sleep 2
  done
  docker logs --tail 30 "smoke-$role" >&2; die "smoke: $role did not answer /health 200 within 180 s"
}

# --- smoke: every role under a read-only root with Docker's (noexec) /tmp tmpfs, as Kubernetes and compose run it --

smoke() {
  local smoke_net=rx-smoke smoke_key smoke_redis_pw worker_env
  docker network create "$smoke_net" >/dev/null
  smoke_key="$(openssl rand -hex 24)"
  smoke_redis_pw="$(openssl rand -hex 24)"
  docker run -d --name smoke-redis --network "$smoke_net" --network-alias redis --user redis redis:7.4-alpine \
    redis-server --requirepass "$smoke_redis_pw" --save "" >/dev/null
  worker_env=(-e REDIS_URL="redis://:$smoke_redis_pw@redis:6379" -e RX_BACKEND_URL=http://policy-server:8000 -e TINKER_API_KEY="$smoke_key" -e NODE_OPTIONS=--max-old-space-size=160)
  smoke_role policy-server 8000 -e HOST=0.0.0.0 -e RX_DATA_DIR=/data/policy-server -e RX_POLICY_API_KEY="$smoke_key"
  smoke_wait policy-server 8000
  smoke_role sampler 3101 "${worker_env[@]}"
  smoke_role grader 3102 "${worker_env[@]}"
  smoke_role advantage 3103 "${worker_env[@]}"
  smoke_role trainer 3104 "${worker_env[@]}"
  smoke_wait sampler 3101
  smoke_wait grader 3102
  smoke_wait advantage 3103
  smoke_wait trainer 3104
  smoke_role controller 3100 "${worker_env[@]}" -e RX_SPEC=specs/embedded.json -e RX_RUN_NAME=smoke
  smoke_wait controller 3100
  docker rm -fv smoke-controller smoke-sampler smoke-grader smoke-advantage smoke-trainer smoke-policy-server smoke-redis >/dev/null
  docker network rm "$smoke_net" >/dev/null
}

# --- the stack: up, every service healthy, the controller's run, its record ----------------------------------------

health_report() {
  "${compose[@]}" ps -a --format '{{.Service}} {{.State}} {{.Health}}' | sort
}

stack() {
  stack_up=1
  "${compose[@]}" up -d --wait --wait-timeout 600 >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; die "docker compose up -d --wait: a service did not become healthy"; }
  services_expected="$("${compose[@]}" config --services | sort | tr '\n' ' ')"
  health_report | while read -r svc state health; do say "service $svc: $state $health"; done
  unhealthy="$(health_report | awk '$3 != "healthy" { print $1 }' | tr '\n' ' ')"
  [ -z "$unhealthy" ] || die "not healthy after up --wait: $unhealthy"
  [ "$(health_report | awk '{ print $1 }' | tr '\n' ' ')" = "$services_expected" ] || die "services up: $(health_report | awk '{ print $1 }' | tr '\n' ' '); expected: $services_expected"

  controller="$("${compose[@]}" ps -q controller)"
  say "controller $controller: running the embedded experiment"
  code="$(timeout "${RX_COMPOSE_RUN_TIMEOUT:-1800}" docker wait "$controller")" || die "the controller did not end within ${RX_COMPOSE_RUN_TIMEOUT:-1800} s"
  restarts="$(docker inspect -f '{{.RestartCount}}' "$controller")"
  say "controller exited $code (restarts: $restarts)"
  "${compose[@]}" logs --no-color --tail 15 controller | sed 's/^/  /'

  # Everything below is checked and printed before the step fails, so one run shows every fault at once.
  local failures=()
  [ "$code" = 0 ] || failures+=("the controller's run exited $code (0 complete, 2 a configuration mistake, 3 stopped by a pre-registered check, 4 its record fails a validator)")

  # After the run: every other service running, never restarted (compose restarts one that crashed), and healthy. A
  # worker's /health asks the policy server, whose event loop a CPU-bound training or sampling request holds for
  # seconds: during the run a probe can time out and Docker mark a working service unhealthy. So health is read from
  # probes taken after the run (Docker probes every 10 s; 5 failures in a row mark unhealthy, one success healthy):
  # each service must be healthy within 120 s of the controller's end, and a service that is not is a failure.
  local svc id state restarts health waited pending
  for waited in $(seq 0 5 120); do
    pending=""
    for svc in $services_expected; do
      [ "$svc" = controller ] && continue
      id="$("${compose[@]}" ps -q "$svc")"
      [ "$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{end}}' "$id")" = healthy ] || pending="$pending $svc"
    done
    [ -z "$pending" ] && break
    sleep 5
  done
  for svc in $services_expected; do
    [ "$svc" = controller ] && continue
    id="$("${compose[@]}" ps -q "$svc")"
    read -r state restarts health <<<"$(docker inspect -f '{{.State.Status}} {{.RestartCount}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$id")"
    say "service $svc after the run: $state, $restarts restarts, $health"
    [ "$state" = running ] && [ "$restarts" = 0 ] && [ "$health" = healthy ] || failures+=("service $svc after the run: $state, $restarts restarts, $health (healthy expected within 120 s of the run's end)")
  done

  local status_out check_out check_rc=0
  if status_out="$("${compose[@]}" run --rm --no-deps -T controller rx status /data/runs/embedded 2>&1)"; then
    echo "$status_out" | grep -E '^(status|eval|decision|verdict)' | sed 's/^/  /' || true
  else
    echo "$status_out" | sed 's/^/  /' >&2
    failures+=("rx status on the stack's run directory failed")
  fi
  check_out="$("${compose[@]}" run --rm --no-deps -T controller rx check-record /data/runs/embedded 2>&1)" || check_rc=$?
  echo "$check_out" | sed 's/^/  /'
  if [ "$check_rc" -eq 0 ]; then
    say "rx check-record: every validator passes on the stack's record"
  else
    failures+=("rx check-record on the stack's record exited $check_rc")
  fi
  if [ "${#failures[@]}" -gt 0 ]; then
    printf 'compose-stack: %s\n' "${failures[@]}" >&2
    die "${#failures[@]} check(s) failed after the run (above)"
  fi

  "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || die "docker compose down -v"
  stack_up=""
  say "docker compose down -v done"
}

# The whole file is read before anything runs (a checkout changing under a running CI cannot change what runs).
main() {
  prepare_packages
  prepare_rootfs
  if [ "$mode" = prepare ]; then say "prepared in $work"; return; fi
  engine_env
  start_engine
  build_stand_ins
  build_rx
  smoke
  stack
}

main
