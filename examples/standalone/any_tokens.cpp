// One compiled RMSNorm for any number of tokens, called from C++: the
// launcher of ../rmsnorm_any_tokens.mlir takes T after its pointers.
//
// Builds against the generated any_tokens/rmsnorm_any_tokens.{cu,h} (see the
// Makefile), runs the launcher at several T with buffers sized by the
// header's macros, poisons each output first, and checks every element
// against a CPU loop in double precision; T = 0 must be refused. Exits 0
// when every T passes.

#include <cmath>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "rmsnorm_any_tokens.h"

namespace {

constexpr long long kWidth = RMSNORM_ANY_TOKENS_W_ELEMENTS;
constexpr double kEps = 1e-6;

float next_uniform(unsigned long long& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<float>((state >> 40) * (1.0 / (1ULL << 24))) * 4.0f - 2.0f;
}

// Runs the launcher at T tokens; the relative L2 error against the CPU, or
// a negative number where a CUDA call failed.
double run_at(int64_t tokens, const std::vector<float>& w, const float* dw,
              cudaStream_t stream) {
  const size_t count = static_cast<size_t>(RMSNORM_ANY_TOKENS_X_ELEMENTS(tokens));
  std::vector<float> x(count), norm(count);
  unsigned long long state = 2026 + tokens;
  for (float& v : x) v = next_uniform(state);
  float *dx = nullptr, *dnorm = nullptr;
  if (cudaMalloc(&dx, count * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&dnorm, count * sizeof(float)) != cudaSuccess) {
    return -1.0;
  }
  cudaMemcpy(dx, x.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(dnorm, 0xff, count * sizeof(float));  // poison: NaN
  const cudaError_t err = rmsnorm_any_tokens(dx, dw, dnorm, tokens, stream);
  if (err != cudaSuccess || cudaStreamSynchronize(stream) != cudaSuccess) {
    std::fprintf(stderr, "T = %lld: %s\n", static_cast<long long>(tokens),
                 cudaGetErrorString(err));
    return -1.0;
  }
  cudaMemcpy(norm.data(), dnorm, count * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dnorm);
  double error = 0.0, total = 0.0;
  for (int64_t r = 0; r < tokens; ++r) {
    const float* row = &x[static_cast<size_t>(r * kWidth)];
    double mean_square = 0.0;
    for (long long c = 0; c < kWidth; ++c) mean_square += double(row[c]) * row[c];
    const double scale = 1.0 / std::sqrt(mean_square / kWidth + kEps);
    for (long long c = 0; c < kWidth; ++c) {
      const double want = row[c] * scale * w[c];
      const double got = norm[static_cast<size_t>(r * kWidth + c)];
      if (std::isnan(got)) return INFINITY;
      error += (got - want) * (got - want);
      total += want * want;
    }
  }
  return std::sqrt(error / total);
}

}  // namespace

int main() {
  std::vector<float> w(kWidth);
  unsigned long long state = 7;
  for (float& v : w) v = next_uniform(state);
  float* dw = nullptr;
  cudaMalloc(&dw, w.size() * sizeof(float));
  cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  bool ok = true;
  for (int64_t tokens : {1, 2, 17, 128, 4099}) {
    const double error = run_at(tokens, w, dw, stream);
    const bool passed = error >= 0.0 && error < 1e-5;
    std::printf("rmsnorm_any_tokens T = %lld (dims %s): relative L2 error %.2e %s\n",
                static_cast<long long>(tokens), RMSNORM_ANY_TOKENS_DIMS, error,
                passed ? "ok" : "FAIL");
    ok = ok && passed;
  }
  const cudaError_t refused = rmsnorm_any_tokens(dw, dw, nullptr, 0, stream);
  std::printf("T = 0: %s\n", cudaGetErrorString(refused));
  ok = ok && refused == cudaErrorInvalidValue;
  cudaFree(dw);
  cudaStreamDestroy(stream);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
