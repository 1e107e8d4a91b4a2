import ctypes, os, sys, torch, cutlass_gemm
ctypes.CDLL(sys.argv[1], mode=os.RTLD_GLOBAL | os.RTLD_NOW)
bf = torch.bfloat16
class M(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.w = torch.nn.Parameter(torch.randn(64, 32, dtype=bf)); s.bias = torch.nn.Parameter(torch.randn(64, dtype=bf))
    def forward(s, x, r):
        y = cutlass_gemm.gemm(x, s.w, bias=s.bias, residual=r, activation="gelu", beta=0.5)
        y2 = cutlass_gemm.gemm(y, s.w.t().contiguous(), out_dtype=torch.float32)
        a8, sa = cutlass_gemm.quantize_fp8(x.float(), "row")
        b8, sb = cutlass_gemm.quantize_fp8(s.w.float(), "row")
        z = cutlass_gemm.scaled_mm(a8, b8, sa, sb, bias=s.bias, activation="relu")
        return y2, z
m = M()
x, r = torch.randn(8, 32, dtype=bf), torch.randn(8, 64, dtype=bf)
ep = torch.export.export(m, (x, r))
decls = {torch.ops.cutlass_gemm.gemm.default: ["AOTITorchError aoti_torch_cpu_gemm(AtenTensorHandle a, AtenTensorHandle b, AtenTensorHandle* bias, AtenTensorHandle* residual, const char* activation, double alpha, double beta, int32_t* out_dtype, const char* config, AtenTensorHandle* ret0)"],
         torch.ops.cutlass_gemm.scaled_mm.default: ["AOTITorchError aoti_torch_cpu_scaled_mm(AtenTensorHandle a, AtenTensorHandle b, AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle* bias, AtenTensorHandle* residual, const char* activation, double beta, int32_t* out_dtype, const char* accumulate, const char* config, AtenTensorHandle* ret0)"]}
p = torch._inductor.aoti_compile_and_package(ep, package_path="/tmp/aoti/m2.pt2", inductor_configs={"aot_inductor.custom_ops_to_c_shims": decls})
loaded = torch._inductor.aoti_load_package(p)
got = loaded(x, r); want = m(x, r)
for g, w in zip(got, want):
    print(g.dtype, g.shape, (g.float() - w.float()).abs().max().item())
