#!/usr/bin/env bash
# The toolchain from Debian, in one place: `npm start` (scripts/start.mjs) and CI (.ci/run) both call this script,
# so their package lists cannot drift. It checks which tools and headers are missing and installs their Debian
# packages with apt-get (through sudo when not root). When it cannot install (no apt-get; not root and no sudo; or
# the install fails) it prints one line naming the packages to install and exits 1.
#
#   scripts/toolchain.sh start   what `npm start` needs: the WASM build (emcmake/em++, binaryen, cmake, make, headers)
#   scripts/toolchain.sh ci      what `npm test` needs on a fresh machine: also g++, ctest, node, npm, git, chromium,
#                                clang and its libFuzzer runtime (tests/fuzz), python3-sentencepiece (the reference of
#                                tests/node/hf-tokenizers.test.mjs)
#
#   ATTNLENS_DRY_RUN=1           print the commands that would run, run none of them (exit 0)
#   ATTNLENS_INCLUDE_ROOT=dir    where the header packages are looked for (default /usr/include; for tests); the
#                                libFuzzer runtime and Python's sentencepiece module are looked for beside it
#                                (dir/../lib/llvm-14/..., dir/../lib/python3/dist-packages/sentencepiece)
# Bash only (no node: on a fresh machine CI calls it before Node is installed); `id -u` tells root from a user.
set -euo pipefail

purpose="${1:-ci}"
inc="${ATTNLENS_INCLUDE_ROOT:-/usr/include}"
# clang's libFuzzer runtime (the fuzz step of `npm test`, tests/fuzz): Debian's clang only recommends it.
fuzzer_rt="$inc/../lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a"

# "command-or-header : Debian package : what needs it" (start: the WASM build of `npm start`; ci: `npm test`).
# The WASM build needs doctest-dev too: CMakeLists.txt refuses to configure without all three header packages.
entries=(
  "cmake:cmake:start"
  "make:make:start"
  "emcmake:emscripten:start"
  "em++:emscripten:start"
  "wasm-dis:binaryen:start"
  "$inc/xsimd/xsimd.hpp:libxsimd-dev:start"
  "$inc/doctest/doctest.h:doctest-dev:start"
  "$inc/nlohmann/json.hpp:nlohmann-json3-dev:start"
  "g++:g++:ci"
  "ctest:cmake:ci"
  "node:nodejs:ci"
  "npm:npm:ci"
  "git:git:ci"
  "chromium:chromium:ci"
  "clang++:clang:ci"
  "$fuzzer_rt:libclang-rt-14-dev:ci"
  "$inc/../lib/python3/dist-packages/sentencepiece/__init__.py:python3-sentencepiece:ci"
)
case "$purpose" in
  start|ci) ;;
  *) echo "usage: scripts/toolchain.sh start|ci" >&2; exit 2 ;;
esac

missing=()
for entry in "${entries[@]}"; do
  IFS=: read -r what pkg need <<<"$entry"
  [ "$purpose" = ci ] || [ "$need" = start ] || continue
  if [[ "$what" == *'*'* ]]; then compgen -G "$what" >/dev/null && continue
  elif [[ "$what" == /* ]]; then [ -e "$what" ] && continue
  else command -v "$what" >/dev/null 2>&1 && continue; fi
  [[ " ${missing[*]-} " == *" $pkg "* ]] || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
  [ "${ATTNLENS_DRY_RUN:-}" = 1 ] && echo "dry run: nothing to install"
  exit 0
fi

list="${missing[*]}"
cannot() {
  echo "attnlens needs these Debian packages: $list ($1); as root run: apt-get install -y $list" >&2
  exit 1
}

sudo=""
if ! command -v apt-get >/dev/null 2>&1; then cannot "no apt-get on this machine"; fi
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || cannot "not root and no sudo"
  sudo="sudo"
fi

echo "installing from Debian: $list"
update=(${sudo:+"$sudo"} apt-get update)
install=(${sudo:+"$sudo"} env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}")
if [ "${ATTNLENS_DRY_RUN:-}" = 1 ]; then
  echo "dry run: ${update[*]}"
  echo "dry run: ${install[*]}"
  exit 0
fi
"${update[@]}" || cannot "apt-get update failed"
"${install[@]}" || cannot "apt-get install failed"
