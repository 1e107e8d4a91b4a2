# Session 56, the last ~330 s of device time: on an H200 the TMA L2 promotion A/B of session 55 (128 B against 256 B,
# llama3_70b M <= 512 and deepseek_v3 M <= 128, 3 rounds) to confirm or move the default there; on any other GPU
# nothing (the H100 figures are in s55_l2_promotion).
#   bash bench/results/experiments/s56/call2.sh   (repo root, on the device; carry the build)
set -u
: "${OUT:?run on the device (OUT unset)}"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$GPU"
[[ "$GPU" == *H200* ]] || { echo "not an H200: stopping"; exit 0; }
ROUNDS=3 T1=${T1:-170} T=${T:-280} bash bench/results/experiments/s55_l2_promotion/ab.sh
