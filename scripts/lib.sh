# Shared by the README's two commands (demo.sh, test.sh) and .ci/run. Source it; it defines
# functions only.

repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

# The Debian/Ubuntu packages that building, testing and running dsh-sandbox need.
DSH_PACKAGES=(
  cmake ninja-build g++ clang libclang-rt-dev clang-format clang-tidy
  libgtest-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev libseccomp-dev
  bubblewrap util-linux musl-tools tmux python3 python3-pip git
  python3-jsonschema python3-venv python3-setuptools python3-wheel nodejs pkg-config
  libasio-dev libidn2-dev
)

missing_packages() {
  local pkg
  for pkg in "${DSH_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed$' ||
      echo "$pkg"
  done
  # npm: Debian's package only where no npm is on PATH (a NodeSource nodejs ships its own npm,
  # and Debian's npm would conflict with it).
  command -v npm >/dev/null 2>&1 || echo npm
}

# Installs missing packages when run as root; otherwise prints the exact apt-get line and fails.
ensure_packages() {
  local missing
  mapfile -t missing < <(missing_packages)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "dsh-sandbox: missing Debian packages; install them, then run this command again:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    return 1
  fi
  echo "dsh-sandbox: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The build tree. Two places would not do: under /tmp, which Landlock's workspace-write grants,
# the provider refuses a launcher a confined command could replace; and integration tests also
# run as nobody (uid 65534), who must reach the binaries, so a checkout under a private
# directory (such as /root) cannot hold them. Either way the build tree goes to /var/tmp.
build_root() {
  local repo="$1"
  if [[ "$repo/" != /tmp/* ]] &&
     { [ "$(id -u)" -ne 0 ] ||
       setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$repo" 2>/dev/null; }; then
    echo "$repo/build"
    return
  fi
  local dir="/var/tmp/dsh-sandbox-build-$(printf '%s' "$repo" | sha256sum | cut -c1-12)"
  mkdir -p "$dir" && chmod 0755 "$dir"
  echo "$dir"
}

# configure DIR [cmake args...]: the project's own builds make every warning an error
# (DSH_WERROR; a consumer's build does not).
configure() {
  local dir="$1"
  shift
  cmake -S "$(repo_root)" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDSH_WERROR=ON \
    "$@" >/dev/null
}

# configure_and_build DIR [cmake args...]: everything, the tests and benchmarks included.
configure_and_build() {
  configure "$@"
  cmake --build "$1"
}
