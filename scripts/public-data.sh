#!/usr/bin/env bash
# public-data.sh: fetch the public data the tests read, at pinned commits, into one folder.
#
# Usage:
#   scripts/public-data.sh DIR                 fetch every public file into DIR, check each
#                                              SHA-256, print where it came from and its licence
#   scripts/public-data.sh --check DIR         only check the hashes of DIR's files (no network)
#   JOULEPLAN_FIXTURES=DIR cargo test --release   then run the whole suite on it
# Options (fetch mode):
#   --cache CACHE        where the raw artifact files are kept between runs (default
#                        ${XDG_CACHE_HOME:-$HOME/.cache}/jouleplan/public-data, about 215 MB)
#   --from-mirror OWNER+REPO=GITDIR
#                        read OWNER/REPO's files from a local git clone or mirror
#                        (`git --git-dir=GITDIR show COMMIT:PATH`) instead of the network;
#                        repeatable; JOULEPLAN_PUBLIC_MIRRORS="OWNER+REPO=GITDIR ..." does the same
#   JOULEPLAN_PUBLIC_RAW_URL  another host laid out as raw.githubusercontent.com/OWNER/REPO/COMMIT/PATH
# Exit status: 0 all files match; 1 a file is missing, could not be fetched or made, or its hash
# differs (each such file is named); 2 bad usage or a missing tool (named; nothing is installed).
#
# DIR gets the layout of ../shared/fixtures for the parts taken from public repositories (the
# parts this project measured itself, talp/ mpip/ gpu-h100/ cpu-16core/, are not fetched):
#   paraver/epoch/       17 files, byte copies: numericalalgorithmsgroup/pypop,
#                        pypop/examples/mpi/epoch_example_traces/ (BSD-3-Clause-Clear, LICENSE.md)
#   paraver/legacy/      qsort_beo3.prv and .pcf, byte copies: bsc-performance-tools/paraver-kernel,
#                        test/cutter/ (LGPL-2.1, COPYING)
#   energy/xeon-phi-spmv/  spmv.<kHz>.csv, 7 byte copies: gtcasl/hpc-task-pareto-frontiers,
#                        experiments/frequency/ (the repository states no licence)
#   gpu-clocks/          gtxtitanx-real.csv, gtxtitanx-micro.csv and LICENSE-gpuPTXModel.txt, byte
#                        copies: hpc-ulisboa/gpuPTXModel, datasets/gtxtitanx/{real,micro}benchmarks/
#                        aggregated_dataset_gtxtitanx.csv and LICENSE (BSD-3-Clause)
#   multinode/pmbs23-icelake.csv  parsed (scripts/public_data_csv.py) from 1,393 LIKWID outputs of
#                        RRZE-HPC/PMBS23-AD, Output_{small,tiny}_ClusterA/ (GPL-3.0, .zenodo.json)
#   multinode/lulesh-icelake.csv  parsed from 38 outputs of RRZE-HPC/LULESH-AD,
#                        output-data-perf-power-energy/FullApplicationAnalysis/{3-MPI-ICL-node,
#                        5-MPI-ICL-cluster,9-MPI-ICL-freq}/ (GPL-3.0, LICENSE)
# The commits, paths and SHA-256 of every file (and of every raw input of the two parsed CSVs)
# are in scripts/public-data.manifest. The READMEs of ../shared/fixtures are the project's own
# notes, not public data, and are not written.
# Needs: curl or wget (fetch mode, unless every source has a mirror), git (mirrors), python3
# (the two parsed CSVs), sha256sum or shasum (always).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MANIFEST="$HERE/public-data.manifest"
PARSER="$HERE/public_data_csv.py"
ME=public-data.sh

usage() {
  sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() { echo "$ME: $*" >&2; exit 2; }

CHECK_ONLY=0
DIR=""
CACHE="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/jouleplan/public-data"
MIRRORS="${JOULEPLAN_PUBLIC_MIRRORS:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --check) CHECK_ONLY=1 ;;
    --cache) [ $# -ge 2 ] || die "--cache needs a folder"; CACHE=$2; shift ;;
    --cache=*) CACHE=${1#*=} ;;
    --from-mirror) [ $# -ge 2 ] || die "--from-mirror needs OWNER+REPO=GITDIR"; MIRRORS="$MIRRORS $2"; shift ;;
    --from-mirror=*) MIRRORS="$MIRRORS ${1#*=}" ;;
    -h|--help) usage ;;
    -*) echo "$ME: unknown option '$1'" >&2; usage ;;
    *) [ -z "$DIR" ] || die "one DIR only (got '$DIR' and '$1')"; DIR=$1 ;;
  esac
  shift
done
[ -n "$DIR" ] || usage
[ -f "$MANIFEST" ] || die "the manifest $MANIFEST is missing"

# --- tools: say what is missing, install nothing ------------------------------------------
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum < "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 < "$1" | cut -d' ' -f1; }
else
  die "needs sha256sum (GNU coreutils) or shasum (perl) to check the files; install one of them"
fi

# --- the manifest's sources (bash 3 compatible: parallel arrays) ----------------------------
SRC_NAMES=(); SRC_REPOS=(); SRC_COMMITS=(); SRC_LICFILES=(); SRC_LICENCES=()
while read -r kind name repo commit licfile licence; do
  [ "$kind" = source ] || continue
  SRC_NAMES+=("$name"); SRC_REPOS+=("$repo"); SRC_COMMITS+=("$commit")
  SRC_LICFILES+=("$licfile"); SRC_LICENCES+=("$licence")
done < "$MANIFEST"
# Sets REPO COMMIT LICFILE LICENCE MIRROR for source $1.
source_of() {
  local i
  for i in "${!SRC_NAMES[@]}"; do
    if [ "${SRC_NAMES[$i]}" = "$1" ]; then
      REPO=${SRC_REPOS[$i]}; COMMIT=${SRC_COMMITS[$i]}
      LICFILE=${SRC_LICFILES[$i]}; LICENCE=${SRC_LICENCES[$i]}
      MIRROR=$(mirror_of "$REPO")
      return 0
    fi
  done
  die "manifest: no source line for '$1'"
}
mirror_of() {
  local m key=${1/\//+}
  for m in $MIRRORS; do
    case "$m" in "$key="*) echo "${m#*=}"; return 0 ;; esac
  done
}

FAILED=()
fail() { echo "$ME: $*" >&2; FAILED+=("$1"); }

# Checks $1 (a file) against SHA-256 $2; names it as $3 when it differs.
verify() {
  local got
  if [ ! -f "$1" ]; then fail "$3" "is missing"; return 1; fi
  got=$(sha256 "$1")
  if [ "$got" != "$2" ]; then fail "$3" "has SHA-256 $got, the manifest expects $2"; return 1; fi
}

# --- --check DIR ----------------------------------------------------------------------------
if [ "$CHECK_ONLY" = 1 ]; then
  [ -d "$DIR" ] || die "$DIR is not a folder"
  n=0
  while read -r kind a b c d e; do
    case "$kind" in
      file) dest=$d; sum=$b ;;
      derived) dest=$d; sum=$c ;;
      *) continue ;;
    esac
    n=$((n + 1))
    verify "$DIR/$dest" "$sum" "$dest" || true
  done < "$MANIFEST"
  if [ ${#FAILED[@]} -gt 0 ]; then
    echo "$ME: ${#FAILED[@]} of $n files in $DIR do not match the manifest: ${FAILED[*]}" >&2
    exit 1
  fi
  echo "$ME: all $n public files in $DIR match scripts/public-data.manifest"
  exit 0
fi

# --- fetch mode: tools ----------------------------------------------------------------------
missing=()
command -v python3 >/dev/null 2>&1 || missing+=("python3 (parses the two multinode CSVs)")
need_net=0
for name in "${SRC_NAMES[@]}"; do
  source_of "$name"
  if [ -n "$MIRROR" ]; then
    command -v git >/dev/null 2>&1 || missing+=("git (reads the mirror of $REPO)")
  else
    need_net=1
  fi
done
DOWNLOADER=""
if [ "$need_net" = 1 ]; then
  if command -v curl >/dev/null 2>&1; then DOWNLOADER=curl
  elif command -v wget >/dev/null 2>&1; then DOWNLOADER=wget
  else missing+=("curl or wget (downloads from raw.githubusercontent.com)")
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  for m in "${missing[@]}"; do echo "$ME: missing tool: $m" >&2; done
  die "install the tools above (this script installs nothing) and run it again"
fi

RAW_URL=${JOULEPLAN_PUBLIC_RAW_URL:-https://raw.githubusercontent.com}
url_of() { echo "$RAW_URL/$1/$2/$3"; }

# Fetches source $1's PATH $2 at its commit into $3.part, unchecked.
fetch_one() {
  source_of "$1"
  local part="$3.part"
  mkdir -p "$(dirname "$3")"
  if [ -n "$MIRROR" ]; then
    git --git-dir="$MIRROR" show "$COMMIT:$2" > "$part" 2>"$WORK/git.err" \
      || { echo "$ME: $REPO@$COMMIT:$2 not in the mirror $MIRROR: $(head -1 "$WORK/git.err")" >&2; rm -f "$part"; return 1; }
  elif [ "$DOWNLOADER" = curl ]; then
    curl --fail --silent --show-error --location --retry 3 -o "$part" "$(url_of "$REPO" "$COMMIT" "$2")" \
      || { rm -f "$part"; return 1; }
  else
    wget --quiet --tries=3 -O "$part" "$(url_of "$REPO" "$COMMIT" "$2")" || { rm -f "$part"; return 1; }
  fi
}

# Fetches (unless already there with the right hash) and checks one file; $1 source, $2 hash,
# $3 path in the repository, $4 local file, $5 the name to report.
get_checked() {
  if [ -f "$4" ] && [ "$(sha256 "$4")" = "$2" ]; then return 0; fi
  if ! fetch_one "$1" "$3" "$4"; then
    source_of "$1"
    fail "$5" "could not be fetched from $(url_of "$REPO" "$COMMIT" "$3")${MIRROR:+ (mirror $MIRROR)}"
    return 1
  fi
  if ! verify "$4.part" "$2" "$5"; then rm -f "$4.part"; return 1; fi
  mv -f "$4.part" "$4"
}

check_mirrors() {
  local name m known
  for m in $MIRRORS; do
    known=0
    for name in "${SRC_REPOS[@]}"; do [ "${m%%=*}" = "${name/\//+}" ] && known=1; done
    [ "$known" = 1 ] || die "--from-mirror '$m': expected OWNER+REPO=GITDIR with OWNER/REPO one of: ${SRC_REPOS[*]}"
  done
  for name in "${SRC_NAMES[@]}"; do
    source_of "$name"
    [ -n "$MIRROR" ] || continue
    git --git-dir="$MIRROR" cat-file -e "$COMMIT^{commit}" 2>/dev/null \
      || die "the mirror $MIRROR of $REPO lacks the pinned commit $COMMIT"
  done
}
check_mirrors
mkdir -p "$DIR" "$CACHE" || die "cannot create $DIR or $CACHE"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/public-data.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "$ME: fetching the public fixtures into $DIR (raw inputs cached in $CACHE)"
# 1. Byte copies.
while read -r kind name sum path dest <&3; do
  [ "$kind" = file ] || continue
  if get_checked "$name" "$sum" "$path" "$DIR/$dest" "$dest"; then
    source_of "$name"
    echo "  $dest <- $REPO@$COMMIT:$path [$LICENCE]"
  fi
done 3< "$MANIFEST"

# Downloads source $1's raw files that the cache lacks with one curl (parallel where curl can),
# straight into the cache; get_checked below checks each and fetches again what is wrong.
prefetch_raw() {
  local kind src sum path cfg="$WORK/curl.cfg" par=()
  : > "$cfg"
  while read -r kind src sum path <&3; do
    [ "$kind" = raw ] && [ "$src" = "$1" ] && [ ! -f "$2/$path" ] || continue
    printf 'url = "%s"\noutput = "%s"\n' "$(url_of "$REPO" "$COMMIT" "$path")" "$2/$path" >> "$cfg"
  done 3< "$MANIFEST"
  [ -s "$cfg" ] || return 0
  curl --parallel --parallel-max 8 -V >/dev/null 2>&1 && par=(--parallel --parallel-max 8)
  curl ${par[@]+"${par[@]}"} --fail --silent --show-error --location --retry 3 --create-dirs \
    -K "$cfg" || true
}

# 2. Raw inputs of the parsed CSVs, into the cache.
BAD_SOURCES=""
for name in "${SRC_NAMES[@]}"; do
  grep -q "^raw $name " "$MANIFEST" || continue
  source_of "$name"
  root="$CACHE/${REPO/\//+}/$COMMIT"
  [ -n "$MIRROR" ] || [ "$DOWNLOADER" != curl ] || prefetch_raw "$name" "$root"
  n=0; bad=0
  while read -r kind src sum path <&3; do
    [ "$kind" = raw ] && [ "$src" = "$name" ] || continue
    n=$((n + 1))
    get_checked "$name" "$sum" "$path" "$root/$path" "$REPO@$COMMIT:$path" || bad=$((bad + 1))
  done 3< "$MANIFEST"
  [ "$bad" = 0 ] || BAD_SOURCES="$BAD_SOURCES $name"
  dirs=$(grep "^raw $name " "$MANIFEST" | cut -d' ' -f4 | sed 's|/[^/]*$||' | sort -u | tr '\n' ' ')
  echo "  $n raw files of $REPO@$COMMIT ($bad failed) from: $dirs"
done

# 3. The parsed CSVs, made from the cached raw files.
while read -r kind name parser sum dest <&3; do
  [ "$kind" = derived ] || continue
  source_of "$name"
  root="$CACHE/${REPO/\//+}/$COMMIT"
  if [ -n "$BAD_SOURCES" ] && echo " $BAD_SOURCES " | grep -q " $name "; then
    fail "$dest" "not made: some of its inputs from $REPO failed (above)"
    continue
  fi
  grep "^raw $name " "$MANIFEST" | cut -d' ' -f4 > "$WORK/$parser.paths"
  mkdir -p "$(dirname "$DIR/$dest")"
  status=0
  python3 "$PARSER" "$parser" "$root" "$DIR/$dest.part" < "$WORK/$parser.paths" \
    2> "$WORK/parse.err" || status=$?
  if [ "$status" != 0 ]; then
    rm -f "$DIR/$dest.part"
    why=$(head -3 "$WORK/parse.err")
    fail "$dest" "could not be parsed from $REPO@$COMMIT: ${why:-python3 exited with status $status}"
    continue
  fi
  if verify "$DIR/$dest.part" "$sum" "$dest"; then
    mv -f "$DIR/$dest.part" "$DIR/$dest"
    echo "  $dest <- parsed from $(wc -l < "$WORK/$parser.paths" | tr -d ' ') files of $REPO@$COMMIT (each row's last column names its file) [$LICENCE]"
  else
    rm -f "$DIR/$dest.part"
  fi
done 3< "$MANIFEST"

echo "$ME: licences (cite the authors where the figures are used):"
for i in "${!SRC_NAMES[@]}"; do
  where=""
  if [ "${SRC_LICFILES[$i]}" != - ]; then
    where=" ($(url_of "${SRC_REPOS[$i]}" "${SRC_COMMITS[$i]}" "${SRC_LICFILES[$i]}"))"
  fi
  echo "  ${SRC_REPOS[$i]}@${SRC_COMMITS[$i]}: ${SRC_LICENCES[$i]}$where"
done

if [ ${#FAILED[@]} -gt 0 ]; then
  more=""
  [ ${#FAILED[@]} -le 5 ] || more=" and $((${#FAILED[@]} - 5)) more (named above)"
  echo "$ME: ${#FAILED[@]} files failed: ${FAILED[*]:0:5}$more" >&2
  exit 1
fi
echo "$ME: done; every file matches its SHA-256. Run the whole suite with:"
echo "  JOULEPLAN_FIXTURES=$(cd "$DIR" && pwd) cargo test --release"
