#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then use the installed tree as a newcomer would: every
# program the build declares is installed, the CLI runs a confined command with the launcher
# found beside it and an allow-list run through the proxy beside it (a world-writable proxy is
# refused), a CMake project find_packages dsh-sandbox and links dsh::sandbox, and pkg-config
# names the library.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1" source="$2"
source "$(dirname "${BASH_SOURCE[0]}")/installed_tree.sh"
# Beside the build tree, not under /tmp: the provider refuses a launcher a confined run could
# replace (docs/trust.md), and /tmp is writable under workspace-write.
work="$(mktemp -d "$build/install-test.XXXXXX")"
trap 'stop_http_server; rm -rf "$work"' EXIT
chmod 755 "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
check_installed_programs "$prefix/bin"
for file in bin/dsh-sandbox bin/landlock-run bin/dsh-netproxy bin/dsh-seccomp-exec lib/libdsh-sandbox.a include/dsh/sandbox/executor.h \
            lib/cmake/dsh-sandbox/dsh-sandboxConfig.cmake lib/pkgconfig/dsh-sandbox.pc \
            share/man/man1/dsh-sandbox.1 share/man/man1/landlock-run.1 \
            share/bash-completion/completions/dsh-sandbox share/zsh/vendor-completions/_dsh-sandbox \
            share/dsh-sandbox/schema/run.schema.json; do
  [ -e "$prefix/$file" ] || { echo "install_test: $file was not installed" >&2; exit 1; }
done
workspace="$work/workspace"
mkdir "$workspace"
chmod 777 "$workspace"  # the nobody leg writes here too

out="$(cd "$workspace" && "$prefix/bin/dsh-sandbox" run --mode read-only -- ls /)"
grep -qx usr <<<"$out" || { echo "install_test: run printed: $out" >&2; exit 1; }
"$prefix/bin/dsh-sandbox" probe --json | grep -q "\"runner\":\"$prefix/bin/landlock-run\"" ||
  { echo "install_test: probe does not use the installed launcher" >&2; exit 1; }
"$prefix/bin/dsh-sandbox" --version | grep -q '^dsh-sandbox [0-9]'
check_proxy_probed_usable "$prefix/bin"
start_http_server
check_allow_list_run "$prefix/bin"
check_writable_proxy_refused "$prefix/bin"

cmake -S "$source/tests/packaging/consumer" -B "$work/consumer" -G Ninja \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer" "$workspace"
[ ! -e "$work/outside.txt" ] || { echo "install_test: the denied write happened" >&2; exit 1; }

if command -v pkg-config >/dev/null; then
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
  pkg-config --libs dsh-sandbox | grep -q -- "-ldsh-sandbox" &&
    [ "$(realpath "$(pkg-config --variable=includedir dsh-sandbox)")" = "$(realpath "$prefix/include")" ] ||
    { echo "install_test: pkg-config says: $(pkg-config --cflags --libs dsh-sandbox)" >&2; exit 1; }
fi
echo "install_test: the installed CLI, launcher, proxy, CMake package and pkg-config file work"
