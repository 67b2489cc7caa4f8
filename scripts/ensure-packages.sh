#!/usr/bin/env bash
# Installs Debian packages that are missing, for the tests: scripts/ensure-packages.sh CMD=PKG...
# (CMD is the program that shows the package is there, or a path glob starting with / for
# packages without a program, e.g. /usr/lib/llvm-*/lib/libclang.so=libclang-dev). Exit 77 when a package is missing and
# cannot be installed (not root, or apt-get fails): tests skip on it and say why.
set -euo pipefail
# Daemons and admin tools live in sbin, which an unprivileged user's PATH often lacks.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
missing=()
for pair in "$@"; do
  probe="${pair%%=*}"
  if [ "${probe#/}" != "$probe" ]; then
    compgen -G "$probe" >/dev/null || missing+=("${pair#*=}")
  else
    command -v "$probe" >/dev/null 2>&1 || missing+=("${pair#*=}")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "ensure-packages: ${missing[*]} missing and this user cannot install them (not root)" >&2
  exit 77
fi
echo "ensure-packages: installing ${missing[*]}" >&2
if ! { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2; }; then
  echo "ensure-packages: apt-get could not install ${missing[*]}" >&2
  exit 77
fi
