#!/usr/bin/env bash
# Runs Argus' benchmark on each GPU execution provider this machine can use — WebGPU (needs only
# a Vulkan driver), CUDA and TensorRT (need onnxruntime-node's CUDA provider libraries, CUDA 12
# and cuDNN 9) — at batch sizes 1 to 16, with the model prepared as fp32 and as fp16.
#
#   bash bench/gpu.sh                  # providers that work as installed
#   bash bench/gpu.sh --install-cuda   # first fetch the CUDA/TensorRT provider libraries
#                                      # (npm run install-cuda: onnxruntime-node's own download)
#
# Results: bench/results/gpu-<provider>-<precision>.{json,md}, and a summary on stdout.
# Options after -- go to bench/run.js (e.g. -- --cameras 1,4,16,32).
set -euo pipefail
cd "$(dirname "$0")/.."

install_cuda=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --install-cuda) install_cuda=1 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "gpu.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

[ -d node_modules ] || npm ci
if [ "$install_cuda" = 1 ]; then
  npm run install-cuda
fi
npm run build --silent

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
command -v vulkaninfo >/dev/null && vulkaninfo --summary 2>/dev/null | grep -E 'deviceName|driverName' || true

ran=0
for provider in webgpu cuda tensorrt; do
  if ! reason=$(node dist/bench/probe.js "$provider"); then
    echo "gpu.sh: $provider not available here: $reason"
    continue
  fi
  for precision in fp32 fp16; do
    echo "gpu.sh: $provider, $precision"
    node dist/bench/run.js --provider "$provider" --precision "$precision" \
      --batches 1,2,4,8,16 --cameras 1,4,8,16 --sections models,limit,pipeline,levers \
      --out "gpu-$provider-$precision" "${extra[@]}"
    ran=$((ran + 1))
  done
done
if [ "$ran" = 0 ]; then
  echo "gpu.sh: no GPU provider could run here; nothing measured" >&2
  exit 1
fi
echo "gpu.sh: results in bench/results/gpu-*.md"
