#!/usr/bin/env bash
# SASS size of the bf16 64x128 ping-pong kernel with three epilogues (session 12; no GPU needed):
#   ours.cu  the table's kernel (EpilogueTail: beta*C + act(alpha*acc + bias) with the run-time activation)
#   noact.cu the same kernel without the activation node (the table's _noact kernel)
#   plain.cu CUTLASS's LinearCombination (D = alpha*acc, no C)
# Usage: bash notes/epilogue_sass/run.sh   (from the repo root; ~3 min per file on 2 cores)
set -euo pipefail
cd "$(dirname "$0")"
INC=$(python3 -c "import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), 'source'))")
FL="-std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr -DCUTLASS_ENABLE_GDC_FOR_SM90 -DCUTLASS_DEBUG_TRACE_LEVEL=0
    -I$INC/include -I$INC/tools/util/include -I../../csrc -gencode=arch=compute_90a,code=sm_90a"
OUT=$(mktemp -d)
for f in ours noact plain; do
  nvcc $FL -cubin -o "$OUT/$f.cubin" "$f.cu"
  python3 - "$OUT/$f.cubin" "$f" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
shoff = struct.unpack_from("<Q", b, 0x28)[0]
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
sh = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
strtab = sh[shstrndx][4]
for s in sh:
    name = b[strtab + s[0]:b.index(b"\0", strtab + s[0])].decode()
    if name.startswith(".text."):
        print(f"{sys.argv[2]}: {s[5] // 16} SASS instructions (16 bytes each)")
PY
done
rm -rf "$OUT"
