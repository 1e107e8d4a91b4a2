// AOTInductor C shims for cutlass_gemm's ops, in their own small library (cutlass_gemm/_aoti_shims):
// an AOTI-compiled model built with cutlass_gemm.aoti.inductor_configs() calls these directly
// instead of going through its proxy executor. Argument conventions are Inductor's for C shims:
// Tensor = a borrowed AtenTensorHandle, Tensor? = a pointer to one (nullptr: None), ScalarType? =
// a pointer to its int32 code, float = double, str = const char*; the result is a new handle the
// caller owns. Each shim calls the op through the dispatcher with every schema argument, so the
// device's kernel runs (CUDA, or the CPU reference) with its full validation. No CUTLASS code
// here: this library is loaded RTLD_GLOBAL so the model can resolve the shims, and it must not
// export anything another extension could bind to.
#include <array>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/c/shim.h>
#include <torch/csrc/stable/stableivalue_conversions.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/version.h>

namespace {

namespace sd = torch::stable::detail;

// A new owning reference for the dispatcher's stack (the caller keeps its own).
StableIValue tensor_arg(AtenTensorHandle h) {
  AtenTensorHandle own = nullptr;
  STD_TORCH_CHECK(aoti_torch_new_tensor_handle(h, &own) == AOTI_TORCH_SUCCESS, "cutlass_gemm AOTI shim: bad tensor");
  return sd::from(own);
}

StableIValue optional_tensor_arg(AtenTensorHandle* h) {
  return h == nullptr ? sd::from(std::nullopt) : tensor_arg(*h);
}

StableIValue optional_dtype_arg(const int32_t* code) {
  if (code == nullptr) return sd::from(std::nullopt);
  return sd::from(std::optional<torch::headeronly::ScalarType>(static_cast<torch::headeronly::ScalarType>(*code)));
}

template <size_t N>
AOTITorchError call(const char* op, std::array<StableIValue, N>& stack, AtenTensorHandle* ret0) noexcept {
  try {
    STD_TORCH_CHECK(torch_call_dispatcher(op, "", stack.data(), TORCH_ABI_VERSION) == AOTI_TORCH_SUCCESS,
                    op, " failed (the op's error is above)");
    torch::stable::Tensor out = torch::stable::detail::to<torch::stable::Tensor>(stack[0]);
    return aoti_torch_new_tensor_handle(out.get(), ret0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return AOTI_TORCH_FAILURE;
  }
}

AOTITorchError gemm(AtenTensorHandle a, AtenTensorHandle b, AtenTensorHandle* bias, AtenTensorHandle* residual,
                    const char* activation, double alpha, double beta, int32_t* out_dtype, const char* config,
                    AtenTensorHandle* ret0) noexcept {
  try {
    std::array<StableIValue, 9> stack{tensor_arg(a), tensor_arg(b), optional_tensor_arg(bias),
                                      optional_tensor_arg(residual), sd::from(std::string(activation)), sd::from(alpha),
                                      sd::from(beta), optional_dtype_arg(out_dtype), sd::from(std::string(config))};
    return call("cutlass_gemm::gemm", stack, ret0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return AOTI_TORCH_FAILURE;
  }
}

AOTITorchError scaled_mm(AtenTensorHandle a, AtenTensorHandle b, AtenTensorHandle scale_a, AtenTensorHandle scale_b,
                         AtenTensorHandle* bias, AtenTensorHandle* residual, const char* activation, double beta,
                         int32_t* out_dtype, const char* accumulate, const char* config,
                         AtenTensorHandle* ret0) noexcept {
  try {
    std::array<StableIValue, 11> stack{tensor_arg(a), tensor_arg(b), tensor_arg(scale_a), tensor_arg(scale_b),
                                       optional_tensor_arg(bias), optional_tensor_arg(residual),
                                       sd::from(std::string(activation)), sd::from(beta), optional_dtype_arg(out_dtype),
                                       sd::from(std::string(accumulate)), sd::from(std::string(config))};
    return call("cutlass_gemm::scaled_mm", stack, ret0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return AOTI_TORCH_FAILURE;
  }
}

}  // namespace

// The names Inductor derives for a custom op's shim: aoti_torch_{device}_{op name}.
extern "C" {
__attribute__((visibility("default"))) AOTITorchError aoti_torch_cuda_gemm(
    AtenTensorHandle a, AtenTensorHandle b, AtenTensorHandle* bias, AtenTensorHandle* residual, const char* activation,
    double alpha, double beta, int32_t* out_dtype, const char* config, AtenTensorHandle* ret0) {
  return gemm(a, b, bias, residual, activation, alpha, beta, out_dtype, config, ret0);
}
__attribute__((visibility("default"))) AOTITorchError aoti_torch_cpu_gemm(
    AtenTensorHandle a, AtenTensorHandle b, AtenTensorHandle* bias, AtenTensorHandle* residual, const char* activation,
    double alpha, double beta, int32_t* out_dtype, const char* config, AtenTensorHandle* ret0) {
  return gemm(a, b, bias, residual, activation, alpha, beta, out_dtype, config, ret0);
}
__attribute__((visibility("default"))) AOTITorchError aoti_torch_cuda_scaled_mm(
    AtenTensorHandle a, AtenTensorHandle b, AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle* bias,
    AtenTensorHandle* residual, const char* activation, double beta, int32_t* out_dtype, const char* accumulate,
    const char* config, AtenTensorHandle* ret0) {
  return scaled_mm(a, b, scale_a, scale_b, bias, residual, activation, beta, out_dtype, accumulate, config, ret0);
}
__attribute__((visibility("default"))) AOTITorchError aoti_torch_cpu_scaled_mm(
    AtenTensorHandle a, AtenTensorHandle b, AtenTensorHandle scale_a, AtenTensorHandle scale_b, AtenTensorHandle* bias,
    AtenTensorHandle* residual, const char* activation, double beta, int32_t* out_dtype, const char* accumulate,
    const char* config, AtenTensorHandle* ret0) {
  return scaled_mm(a, b, scale_a, scale_b, bias, residual, activation, beta, out_dtype, accumulate, config, ret0);
}
}
