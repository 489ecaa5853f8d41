#!/usr/bin/env bash
# Builds StepMesh's library (libps.a) CPU-only from an unmodified source, in two variants:
#   OUT/default  the Makefile's default (no USE_GDR: the server checks data_num == 3)
#   OUT/gdr      USE_GDR=1, what StepMesh's CMake and setup.py build (data_num >= 2)
# each with the RDMA van (USE_RDMA=1) and the zmq van, against Debian's libzmq3-dev.
# Usage: build_stepmesh.sh SOURCE OUT [VARIANT...]   (default: both)
#   SOURCE: a release tarball (.tar.gz, one top folder), a source folder (copied: its files
#   are never written), or "git" for a clone of the pinned commit (needs a network).
# Nothing of StepMesh is changed. Three things outside its files make it build without
# libtorch and CUDA: stand-in <ATen/ATen.h> and <torch/torch.h> (stand_in/, put first on the
# include path), -std=c++17 (its queues are alignas(64)), and the CPU backend's two sources
# added to the library's objects (the Makefile's OBJS lacks them, so Backend::Register("CPU")
# would not link).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source=${1:?usage: build_stepmesh.sh SOURCE OUT}
out=${2:?usage: build_stepmesh.sh SOURCE OUT [VARIANT...]}
shift 2
variants=("$@")
[[ ${#variants[@]} -gt 0 ]] || variants=(default gdr)
pinned_repository=https://github.com/stepfun-ai/StepMesh.git
pinned_commit=740ac1259d9b04b8a4fb83258ea0d487e7b514c5

if [[ ! -e /usr/include/zmq.h ]]; then
  echo "build_stepmesh.sh: no /usr/include/zmq.h: install Debian's libzmq3-dev" \
    "(StepMesh's Makefile would download zeromq otherwise)" >&2
  exit 2
fi

# A fresh copy of the source in $1.
unpack() {
  local into=$1
  rm -rf "$into"
  mkdir -p "$into"
  if [[ $source == git ]]; then
    git clone -q "$pinned_repository" "$into"
    git -C "$into" checkout -q "$pinned_commit"
  elif [[ -f $source ]]; then
    tar -xzf "$source" -C "$into" --strip-components=1
  elif [[ -d $source ]]; then
    cp -a "$source/." "$into/"
  else
    echo "build_stepmesh.sh: $source is neither a tarball, a folder nor \"git\"" >&2
    exit 2
  fi
  if [[ ! -f $into/src/rdma_van.h || ! -f $into/include/ps/kv_app.h ]]; then
    echo "build_stepmesh.sh: $source holds no StepMesh source (src/rdma_van.h," \
      "include/ps/kv_app.h)" >&2
    exit 2
  fi
}

objects="build/customer.o build/postoffice.o build/van.o build/network_utils.o"
objects+=" build/backend/backend.o build/backend/cpu_backend.o"
for variant in "${variants[@]}"; do
  if [[ $variant != default && $variant != gdr ]]; then
    echo "build_stepmesh.sh: unknown variant $variant; expected default or gdr" >&2
    exit 2
  fi
  unpack "$out/$variant"
  flags=(ps USE_RDMA=1 USE_CUDA=0 DEPS_PATH=/usr "OBJS=$objects"
    "ADD_CFLAGS=-std=c++17 -I$here/stand_in")
  [[ $variant == gdr ]] && flags+=(USE_GDR=1)
  if ! make -C "$out/$variant" -j"${JOBS:-2}" "${flags[@]}" >"$out/$variant.log" 2>&1; then
    tail -n 40 "$out/$variant.log" >&2
    echo "build_stepmesh.sh: the $variant variant failed to build ($out/$variant.log)" >&2
    exit 1
  fi
  echo "build_stepmesh.sh: $out/$variant/build/libps.a"
done
