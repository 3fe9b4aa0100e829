// The seed RMSNorm, compiled by Molten, called from C++ without Python.
//
// Builds against the generated ../fused_rmsnorm.{cu,h} (see the Makefile),
// runs the extern "C" launcher on the GPU, and checks every element against
// a CPU loop in double precision. Exits 0 when the relative L2 error is
// below 1e-5 and no output is NaN.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "fused_rmsnorm.h"

namespace {

// The sizes the graph was compiled for, from the generated header.
constexpr long long kShape[] = FUSED_RMSNORM_X_SHAPE;
constexpr int kRows = static_cast<int>(kShape[0]);
constexpr int kHidden = static_cast<int>(kShape[1]);
constexpr double kEps = 1e-6;

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}

// A small deterministic generator, so the check needs no library.
float next_uniform(unsigned long long& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<float>((state >> 40) * (1.0 / (1ULL << 24))) * 4.0f - 2.0f;
}

}  // namespace

int main() {
  std::vector<float> x(static_cast<size_t>(kRows) * kHidden), w(kHidden);
  unsigned long long state = 2026;
  for (float& v : x) v = next_uniform(state);
  for (float& v : w) v = next_uniform(state);

  float *dx = nullptr, *dw = nullptr, *dnorm = nullptr;
  const size_t bytes = x.size() * sizeof(float);
  if (!check(cudaMalloc(&dx, bytes), "cudaMalloc x") ||
      !check(cudaMalloc(&dw, w.size() * sizeof(float)), "cudaMalloc w") ||
      !check(cudaMalloc(&dnorm, bytes), "cudaMalloc norm")) {
    return 2;
  }
  cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(dnorm, 0xff, bytes);  // poison: all-ones bytes are NaN

  cudaStream_t stream;
  cudaStreamCreate(&stream);
  if (!check(fused_rmsnorm(dx, dw, dnorm, stream), "fused_rmsnorm") ||
      !check(cudaStreamSynchronize(stream), "the kernel")) {
    return 2;
  }
  std::vector<float> norm(x.size());
  cudaMemcpy(norm.data(), dnorm, bytes, cudaMemcpyDeviceToHost);

  double error = 0.0, total = 0.0;
  size_t nans = 0;
  for (int r = 0; r < kRows; ++r) {
    const float* row = &x[static_cast<size_t>(r) * kHidden];
    double mean_square = 0.0;
    for (int c = 0; c < kHidden; ++c) mean_square += double(row[c]) * row[c];
    const double scale = 1.0 / std::sqrt(mean_square / kHidden + kEps);
    for (int c = 0; c < kHidden; ++c) {
      const double want = row[c] * scale * w[c];
      const double got = norm[static_cast<size_t>(r) * kHidden + c];
      if (std::isnan(got)) ++nans;
      error += (got - want) * (got - want);
      total += want * want;
    }
  }
  const double relative = std::sqrt(error / total);
  std::printf("fused_rmsnorm %dx%d: relative L2 error %.2e, %zu NaN\n", kRows, kHidden,
              relative, nans);

  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dnorm);
  cudaStreamDestroy(stream);
  const bool ok = nans == 0 && relative < 1e-5;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
