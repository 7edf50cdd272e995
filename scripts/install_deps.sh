#!/usr/bin/env bash
# Installs what Millrace needs on Debian 12: Debian packages with apt-get and the pinned npm
# packages of third_party/npm (package-lock.json). Idempotent: when everything is present it
# checks and returns without touching the network.
#
#   install_deps.sh          everything: the server's build and the tests' peers (`make test`)
#   install_deps.sh server   only what the server needs to build and run (`make run`)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
profile=${1:-all}
case "$profile" in
  server | all) ;;
  *)
    echo "usage: $0 [server|all]" >&2
    exit 2
    ;;
esac

# The server's build (libraries it links, the compiler, ccache) and the mariadb client the
# README's quickstart connects with.
apt_packages=(
  build-essential cmake ninja-build clang ccache pkg-config
  libssl-dev libcurl4-openssl-dev libpugixml-dev libasio-dev libcpp-httplib-dev
  zlib1g-dev libzstd-dev libbz2-dev liblz4-dev
  nlohmann-json3-dev libutfcpp-dev
  libmariadb-dev libpq-dev
  mariadb-client
  nodejs npm
)
# The tests, the benchmarks and their peers: GoogleTest, the formatter CI checks with, the
# database servers, the client drivers, the browser and a one-node Ceph RADOS Gateway.
if [[ "$profile" == all ]]; then
  apt_packages+=(
    clang-format
    libgtest-dev libgmock-dev
    mariadb-server postgresql-15
    python3-mysqldb python3-pymysql python3-sqlalchemy
    golang-go golang-github-go-sql-driver-mysql-dev
    default-jdk-headless libmariadb-java
    chromium
    ceph-mon ceph-osd radosgw
  )
fi

missing=()
for pkg in "${apt_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
# node may come from elsewhere than Debian's package (the image ships its own); accept it.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for pkg in "${missing[@]+"${missing[@]}"}"; do
    [[ "$pkg" == nodejs || "$pkg" == npm ]] || filtered+=("$pkg")
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if ((${#missing[@]})); then
  echo "install_deps: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
fi

# npm packages: installed again only when package-lock.json changed since the last install.
npm_dir="$root/third_party/npm"
stamp="$npm_dir/node_modules/.millrace-stamp"
lock_sum=$(sha256sum "$npm_dir/package-lock.json" | cut -d' ' -f1)
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_sum" ]]; then
  echo "install_deps: installing pinned npm packages"
  # --ignore-scripts: the duckdb package's install script would build a Node addon we do not
  # use; we take only its header and the prebuilt libduckdb.so.
  (cd "$npm_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  if [[ $(uname -m) == aarch64 ]]; then
    (cd "$npm_dir" && npm install --no-save --ignore-scripts --no-audit --no-fund \
      --loglevel=error @duckdb/node-bindings-linux-arm64@1.4.4-r.4)
  fi
  echo "$lock_sum" >"$stamp"
fi
