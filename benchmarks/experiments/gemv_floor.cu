// The decode floor: how fast any kernel can read a 1x4096x4096 f16 GEMV's
// weight (32 MiB) on this GPU, timed as the benchmark harness times (CUDA
// events around one call, the L2 flushed before it by zeroing one 256 MiB
// buffer and reading another, median of 40), beside Molten's GEMV kernel
// and two split-K designs. A standalone experiment, not the harness: see
// benchmarks/experiments/README.md for how to build and run it.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cooperative_groups.h>
#include "molten_gemv.inc"
namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1);} } while (0)

__global__ void read_max(const float4* p, size_t n, float* out) {
  float m = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = p[i]; m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
  }
  if (m == 12345.f) out[0] = m;
}

// Bound: stream-read the weight once (16-byte loads, UNROLL in flight), no math.
template <int UNROLL>
__global__ void __launch_bounds__(512) read_only(const uint4* p, size_t n, unsigned* out) {
  unsigned acc = 0;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = p[i + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) { uint4 v = p[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x9e3779b9u) out[0] = acc;
}

__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.f + erff(v * 0.70710678f)); }

// The block's share of a split-K GEMV: columns [col0, col0 + 256) (a warp
// reads 512 contiguous bytes of a row) summed over rows [k0, k0 + rows),
// INFLIGHT rows of the weight a warp in flight; the 256 sums go to out[c].
template <int THREADS, int INFLIGHT>
__device__ __forceinline__ void column_sums(const __half* __restrict__ x, const __half* __restrict__ w,
                                            int k0, int rows, int col0, int N, float* out) {
  constexpr int WARPS = THREADS / 32;
  __shared__ float part[WARPS][256 + 4];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const __half* wp = w + (size_t)k0 * N + col0 + lane * 8;
  const __half* xp = x + k0;
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int r = warp; r < rows; r += WARPS * INFLIGHT) {
    uint4 v[INFLIGHT];
    float xs[INFLIGHT];
#pragma unroll
    for (int i = 0; i < INFLIGHT; ++i) {
      int rr = min(r + i * WARPS, rows - 1);
      v[i] = *reinterpret_cast<const uint4*>(wp + (size_t)rr * N);
      xs[i] = (r + i * WARPS < rows) ? __half2float(xp[rr]) : 0.f;
    }
#pragma unroll
    for (int i = 0; i < INFLIGHT; ++i) {
      const __half* h = reinterpret_cast<const __half*>(&v[i]);
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[j] += xs[i] * __half2float(h[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < 8; ++j) part[warp][lane * 8 + j] = acc[j];
  __syncthreads();
  for (int c = threadIdx.x; c < 256; c += THREADS) {
    float s = 0.f;
#pragma unroll
    for (int wv = 0; wv < WARPS; ++wv) s += part[wv][c];
    out[c] = s;
  }
}

// Split-K over a cluster of KSPLIT blocks: block (c, r) sums its 256 columns
// over rows [r K/KSPLIT, (r+1) K/KSPLIT); the partial sums meet in
// distributed shared memory; each rank finishes 256/KSPLIT columns.
template <int KSPLIT, int THREADS, int INFLIGHT>
__global__ void __launch_bounds__(THREADS) gemv_cluster(const __half* __restrict__ x, const __half* __restrict__ w,
                                                       const __half* __restrict__ b, __half* __restrict__ y, int K, int N) {
  __shared__ float blocksum[256];
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = cluster.block_rank();
  const int col0 = blockIdx.x * 256;
  const int rows = K / KSPLIT;
  column_sums<THREADS, INFLIGHT>(x, w, rank * rows, rows, col0, N, blocksum);
  cluster.sync();
  constexpr int PER_RANK = 256 / KSPLIT;
  if (threadIdx.x < PER_RANK) {
    int c = rank * PER_RANK + threadIdx.x;
    float s = 0.f;
#pragma unroll
    for (int q = 0; q < KSPLIT; ++q) s += cluster.map_shared_rank(blocksum, q)[c];
    float v = __half2float(__float2half_rn(s)) + __half2float(b[col0 + c]);
    y[col0 + c] = __float2half_rn(gelu(v));
  }
  cluster.sync();
}

// No cluster: split-K through a second pass over f32 partials.
template <int KSPLIT, int THREADS, int INFLIGHT>
__global__ void __launch_bounds__(THREADS) gemv_partials(const __half* __restrict__ x, const __half* __restrict__ w,
                                                         float* __restrict__ partials, int K, int N) {
  const int rank = blockIdx.y;
  const int col0 = blockIdx.x * 256;
  const int rows = K / KSPLIT;
  column_sums<THREADS, INFLIGHT>(x, w, rank * rows, rows, col0, N, partials + (size_t)rank * N + col0);
}
__global__ void gemv_finish(const float* partials, const __half* b, __half* y, int N, int ksplit) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= N) return;
  float s = 0.f;
  for (int q = 0; q < ksplit; ++q) s += partials[(size_t)q * N + c];
  float v = __half2float(__float2half_rn(s)) + __half2float(b[c]);
  y[c] = __float2half_rn(gelu(v));
}

struct Bench {
  float* flush_a; float* flush_b; float* scratch; size_t flush_n = (256u << 20) / 4;
  cudaEvent_t e0[64], e1[64];
  Bench() {
    CK(cudaMalloc(&flush_a, flush_n * 4)); CK(cudaMalloc(&flush_b, flush_n * 4)); CK(cudaMalloc(&scratch, 64));
    CK(cudaMemset(flush_b, 0, flush_n * 4));
    for (int i = 0; i < 64; ++i) { CK(cudaEventCreate(&e0[i])); CK(cudaEventCreate(&e1[i])); }
  }
  template <typename F> float time(F f, int reps = 40) {
    std::vector<float> t;
    f(); CK(cudaDeviceSynchronize());
    for (int r = 0; r < reps; ++r) {
      CK(cudaMemsetAsync(flush_a, 0, flush_n * 4));
      read_max<<<1056, 512>>>((const float4*)flush_b, flush_n / 4, scratch);
      CK(cudaEventRecord(e0[r % 64])); f(); CK(cudaEventRecord(e1[r % 64]));
      CK(cudaEventSynchronize(e1[r % 64]));
      float ms; CK(cudaEventElapsedTime(&ms, e0[r % 64], e1[r % 64])); t.push_back(ms * 1000);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end()); return t[t.size() / 2];
  }
};

static float h2f(__half h) { return __half2float(h); }

int main() {
  const int K = 4096, N = 4096;
  std::vector<__half> hx(K), hw((size_t)K * N), hb(N);
  unsigned s = 1;
  auto rnd = [&]() { s = s * 1664525u + 1013904223u; return ((s >> 8) & 0xffff) / 65536.f - 0.5f; };
  for (auto& v : hx) v = __float2half(rnd());
  for (auto& v : hw) v = __float2half(rnd() * 0.1f);
  for (auto& v : hb) v = __float2half(rnd());
  std::vector<double> ref(N);
  for (int n = 0; n < N; ++n) {
    double acc = 0; for (int k = 0; k < K; ++k) acc += (double)h2f(hx[k]) * h2f(hw[(size_t)k * N + n]);
    double v = acc + h2f(hb[n]); ref[n] = 0.5 * v * (1 + erf(v / sqrt(2.0)));
  }
  __half *x, *w, *b, *y; float* partials; unsigned* sink;
  CK(cudaMalloc(&x, K * 2)); CK(cudaMalloc(&w, (size_t)K * N * 2)); CK(cudaMalloc(&b, N * 2)); CK(cudaMalloc(&y, N * 2));
  CK(cudaMalloc(&partials, 64 * N * 4)); CK(cudaMalloc(&sink, 4));
  CK(cudaMemcpy(x, hx.data(), K * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(w, hw.data(), (size_t)K * N * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), N * 2, cudaMemcpyHostToDevice));
  Bench bench;
  auto check = [&](const char* name, float us) {
    std::vector<__half> hy(N); CK(cudaMemcpy(hy.data(), y, N * 2, cudaMemcpyDeviceToHost));
    double err = 0, mx = 0; for (int n = 0; n < N; ++n) { err = std::max(err, fabs(h2f(hy[n]) - ref[n])); mx = std::max(mx, fabs(ref[n])); }
    printf("%-40s %8.2f us  %5.2f TB/s  rel err %.2e\n", name, us, (double)K * N * 2 / us / 1e6, err / mx);
    CK(cudaMemset(y, 0xff, N * 2));
  };
  CK(cudaMemset(y, 0xff, N * 2));
  check("molten g_gemm0 (poison check)", bench.time([&] { g_gemm0<<<dim3(128), dim3(1024)>>>(x, w, b, y); }));
  for (int grid : {132, 264, 528, 1056}) {
    char name[64]; snprintf(name, 64, "read_only<4> grid %d x 512", grid);
    float us = bench.time([&] { read_only<4><<<grid, 512>>>((const uint4*)w, (size_t)K * N / 8, sink); });
    printf("%-40s %8.2f us  %5.2f TB/s\n", name, us, (double)K * N * 2 / us / 1e6);
  }
  {
    float us = bench.time([&] { read_only<8><<<264, 512>>>((const uint4*)w, (size_t)K * N / 8, sink); });
    printf("%-40s %8.2f us  %5.2f TB/s\n", "read_only<8> grid 264 x 512", us, (double)K * N * 2 / us / 1e6);
  }
#define CLUSTER(KS, TH, IF)                                                                                  \
  {                                                                                                          \
    auto kern = gemv_cluster<KS, TH, IF>;                                                                    \
    if (KS > 8) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));           \
    cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(N / 256, KS); cfg.blockDim = dim3(TH);                    \
    cudaLaunchAttribute attr; attr.id = cudaLaunchAttributeClusterDimension;                                 \
    attr.val.clusterDim.x = 1; attr.val.clusterDim.y = KS; attr.val.clusterDim.z = 1;                        \
    cfg.attrs = &attr; cfg.numAttrs = 1;                                                                     \
    int clusters = 0; CK(cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg));                              \
    float us = bench.time([&] { CK(cudaLaunchKernelEx(&cfg, kern, (const __half*)x, (const __half*)w, (const __half*)b, y, K, N)); }); \
    char name[64]; snprintf(name, 64, "cluster ksplit %d threads %d inflight %d (%d cl)", KS, TH, IF, clusters); \
    check(name, us);                                                                                         \
  }
  CLUSTER(8, 256, 4) CLUSTER(8, 256, 8) CLUSTER(8, 512, 4) CLUSTER(8, 512, 8) CLUSTER(8, 1024, 4)
  CLUSTER(16, 256, 4) CLUSTER(16, 256, 8) CLUSTER(16, 512, 4) CLUSTER(4, 512, 8) CLUSTER(4, 1024, 4)
#define PARTIALS(KS, TH, IF)                                                                                 \
  {                                                                                                          \
    float us = bench.time([&] {                                                                              \
      gemv_partials<KS, TH, IF><<<dim3(N / 256, KS), TH>>>(x, w, partials, K, N);                            \
      gemv_finish<<<N / 256, 256>>>(partials, b, y, N, KS);                                                  \
    });                                                                                                      \
    char name[64]; snprintf(name, 64, "two-pass ksplit %d threads %d inflight %d", KS, TH, IF);             \
    check(name, us);                                                                                         \
  }
  PARTIALS(8, 512, 8) PARTIALS(16, 256, 8) PARTIALS(16, 512, 4) PARTIALS(32, 256, 4)
  return 0;
}
