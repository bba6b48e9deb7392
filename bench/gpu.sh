#!/usr/bin/env bash
# What matters on a GPU box, in a few minutes, written to bench/results/gpu-<date>.md:
#   - for TensorRT, CUDA and WebGPU, fp32 and fp16: start time cold and warm (TensorRT: the
#     engine built, then loaded from the state directory), builds during a
#     run whose batch sizes vary from 1 to --max-batch, frames/s and p99 per batch size, b8 ÷ b1,
#     the most GPU memory nvidia-smi saw, the provider line (what ran: fp16 or its refusal), and
#     whether the detections on ../shared/media/bus.jpg are the CPU provider's
#     (bench/gpu.ts, section engine);
#   - CPU per camera decoding a 1080p H.264 clip with each hwaccel preset and without
#     (bench/gpu.ts, section decode; the system ffmpeg, /usr/bin/ffmpeg).
# With --full, also Argus' whole benchmark on each GPU provider (bench/run.js: models, limit,
# pipeline, levers; about 20 minutes per provider and precision).
#
#   bash bench/gpu.sh                   # providers that work as installed
#   bash bench/gpu.sh --install-cuda    # first fetch the CUDA/TensorRT provider libraries
#   bash bench/gpu.sh --model models/yolov8s.onnx --max-batch 16 --seconds 60 --cameras 4
#
# Without a GPU it still runs: each provider that cannot load and each preset that cannot run
# says why in the file. On a machine whose only Vulkan device is Mesa's software one (lavapipe)
# the WebGPU figures are labelled so: they show the path works, not how fast a GPU is.
set -euo pipefail
cd "$(dirname "$0")/.."

install_cuda=0
full=0
model=""
max_batch=16
seconds=60
cameras=4
ffmpeg=/usr/bin/ffmpeg
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --install-cuda) install_cuda=1 ;;
    --full) full=1 ;;
    --model) model="$2"; shift ;;
    --max-batch) max_batch="$2"; shift ;;
    --seconds) seconds="$2"; shift ;;
    --cameras) cameras="$2"; shift ;;
    --ffmpeg) ffmpeg="$2"; shift ;;
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

# A model to measure: the one given, else a prepared YOLO from ../shared, else the fixture.
if [ -z "$model" ]; then
  for m in ../shared/models/yolov8n_int8.onnx ../shared/models/yolo11n_int8_320.onnx; do
    if [ -f "$m" ]; then
      model="$(mktemp -d)/$(basename "$m" .onnx)-fp32.onnx"
      node dist/src/cli.js model prepare "$m" --out "$model" >/dev/null
      break
    fi
  done
  [ -n "$model" ] || model=models/argus-fixture.onnx
fi

mkdir -p bench/results
out="bench/results/gpu-$(date -u +%Y%m%dT%H%M%SZ).md"
{
  echo "# GPU bench $(date -u +%FT%TZ)"
  echo
  echo '```'
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"
  node -p "'onnxruntime-node ' + require('onnxruntime-node/package.json').version"
  "$ffmpeg" -hide_banner -version 2>/dev/null | head -1 || echo "no $ffmpeg"
  echo '```'
  echo
} >"$out"

ran=0
for provider in tensorrt cuda webgpu; do
  if ! reason=$(node dist/bench/probe.js "$provider"); then
    echo "$provider: not available here: $reason" | tee -a "$out"
    echo >>"$out"
    continue
  fi
  if [ "$provider" = webgpu ] && command -v vulkaninfo >/dev/null &&
    vulkaninfo --summary 2>/dev/null | grep -q PHYSICAL_DEVICE_TYPE_CPU; then
    echo "webgpu: the first Vulkan device is a CPU one ($(vulkaninfo --summary 2>/dev/null | awk -F' = ' '/deviceName/{print $2; exit}')): software Vulkan: path, not speed" | tee -a "$out"
    echo >>"$out"
  fi
  for precision in fp32 fp16; do
    echo "gpu.sh: $provider, $precision"
    node dist/bench/gpu.js --section engine --model "$model" --provider "$provider" --precision "$precision" \
      --max-batch "$max_batch" --seconds "$seconds" >>"$out"
    ran=$((ran + 1))
    if [ "$full" = 1 ]; then
      node dist/bench/run.js --provider "$provider" --precision "$precision" \
        --batches 1,2,4,8,16 --cameras 1,4,8,16 --sections models,limit,pipeline,levers \
        --out "gpu-$provider-$precision" "${extra[@]}"
    fi
  done
done

echo "gpu.sh: decoding"
node dist/bench/gpu.js --section decode --ffmpeg "$ffmpeg" --cameras "$cameras" >>"$out"

echo "gpu.sh: tables in $out"
[ "$ran" -gt 0 ] || echo "gpu.sh: no GPU provider could run here; engine figures not measured" >&2
