// A whole decoder layer compiled by Molten (examples/decoder_layer.py),
// called from C++ without Python.
//
// Builds against the generated decoder_layer.{cu,h} (see the Makefile:
// `make layer-run MODEL=qwen2.5-7b TOKENS=17`). The header gives every
// tensor's shape, so this driver reads the layer's sizes from it. It fills
// the inputs with random bf16 values, poisons the output with NaN, runs
// the extern "C" launcher, and checks the result against the layer
// computed on the CPU in double precision from the same bf16 inputs, the
// way Hugging Face's modeling code writes it. Then it times the launcher.
// Exits 0 when the relative L2 error is below 1.5e-2 (the layer rounds
// each op to bf16) and no output is NaN.
//
//   ./decoder_layer [rms_norm_eps]     (1e-6 for Qwen2, 1e-5 for Llama 3)

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "decoder_layer.h"

namespace {

using Element = __nv_bfloat16;

constexpr long long kHiddenShape[] = DECODER_LAYER_HIDDEN_STATES_SHAPE;
constexpr long long kCosShape[] = DECODER_LAYER_COS_SHAPE;
constexpr long long kQShape[] = DECODER_LAYER_Q_PROJ_SHAPE;
constexpr long long kKShape[] = DECODER_LAYER_K_PROJ_SHAPE;
constexpr long long kGateShape[] = DECODER_LAYER_GATE_PROJ_SHAPE;
#ifdef DECODER_LAYER_Q_PROJ_BIAS_ELEMENTS
constexpr bool kBiases = true;  // Qwen2: q, k and v have biases
#else
constexpr bool kBiases = false;
#endif

const int kTokens = static_cast<int>(kHiddenShape[0]);
const int kHidden = static_cast<int>(kHiddenShape[1]);
const int kHeadDim = static_cast<int>(kCosShape[1]);
const int kHeads = static_cast<int>(kQShape[0]) / kHeadDim;
const int kKvHeads = static_cast<int>(kKShape[0]) / kHeadDim;
const int kIntermediate = static_cast<int>(kGateShape[0]);
constexpr double kTolerance = 1.5e-2;

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(err));
  return false;
}

// A small deterministic generator, so the check needs no library.
double next_uniform(unsigned long long& state) {  // in [-1, 1)
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (state >> 11) * (1.0 / (1ULL << 53)) * 2.0 - 1.0;
}

// A tensor on the host (its values as the device holds them, bf16 rounded)
// and on the device.
struct Tensor {
  std::vector<double> host;
  Element* device = nullptr;

  explicit Tensor(size_t elements) : host(elements) {}

  bool upload() {
    std::vector<Element> narrow(host.size());
    for (size_t i = 0; i < host.size(); ++i) {
      narrow[i] = __float2bfloat16(static_cast<float>(host[i]));
      host[i] = __bfloat162float(narrow[i]);
    }
    const size_t bytes = narrow.size() * sizeof(Element);
    return check(cudaMalloc(&device, bytes), "cudaMalloc") &&
           check(cudaMemcpy(device, narrow.data(), bytes, cudaMemcpyHostToDevice),
                 "cudaMemcpy");
  }
};

// Random values `offset + scale * u`, u uniform with unit variance.
Tensor random_tensor(size_t elements, double offset, double scale,
                     unsigned long long& state) {
  Tensor t(elements);
  for (double& v : t.host) v = offset + scale * std::sqrt(3.0) * next_uniform(state);
  return t;
}

// ---------------------------------------------------------------------------
// The layer on the CPU, in double.
// ---------------------------------------------------------------------------

using Matrix = std::vector<double>;  // row-major

Matrix rms_norm(const Matrix& x, const Matrix& w, int rows, int cols, double eps) {
  Matrix out(x.size());
  for (int r = 0; r < rows; ++r) {
    const double* row = &x[static_cast<size_t>(r) * cols];
    double mean_square = 0.0;
    for (int c = 0; c < cols; ++c) mean_square += row[c] * row[c];
    const double scale = 1.0 / std::sqrt(mean_square / cols + eps);
    for (int c = 0; c < cols; ++c) out[static_cast<size_t>(r) * cols + c] = w[c] * (row[c] * scale);
  }
  return out;
}

// h @ w.T (+ bias), w stored [out, in] as nn.Linear stores it.
Matrix linear(const Matrix& h, const Tensor& w, const Tensor* bias, int rows, int in,
              int out) {
  Matrix y(static_cast<size_t>(rows) * out);
  for (int r = 0; r < rows; ++r) {
    const double* a = &h[static_cast<size_t>(r) * in];
    for (int n = 0; n < out; ++n) {
      const double* b = &w.host[static_cast<size_t>(n) * in];
      double sum = 0.0;
      for (int k = 0; k < in; ++k) sum += a[k] * b[k];
      y[static_cast<size_t>(r) * out + n] = sum + (bias ? bias->host[n] : 0.0);
    }
  }
  return y;
}

// q * cos + rotate_half(q) * sin on each head of y [T, heads * D], in place.
void rope(Matrix& y, const Tensor& cos, const Tensor& sin, int heads) {
  const int half = kHeadDim / 2;
  std::vector<double> head(kHeadDim);
  for (int t = 0; t < kTokens; ++t) {
    for (int h = 0; h < heads; ++h) {
      double* q = &y[(static_cast<size_t>(t) * heads + h) * kHeadDim];
      std::copy(q, q + kHeadDim, head.begin());
      for (int d = 0; d < kHeadDim; ++d) {
        const double rotated = d < half ? -head[d + half] : head[d - half];
        const size_t at = static_cast<size_t>(t) * kHeadDim + d;
        q[d] = head[d] * cos.host[at] + rotated * sin.host[at];
      }
    }
  }
}

// Causal attention over grouped KV heads: [T, heads * D] from q, k and v
// [T, heads * D], [T, kv_heads * D] (the heads side by side, as projected).
Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v) {
  Matrix o(static_cast<size_t>(kTokens) * kHeads * kHeadDim, 0.0);
  const int groups = kHeads / kKvHeads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(kHeadDim));
  std::vector<double> p(kTokens);
  for (int h = 0; h < kHeads; ++h) {
    const int kv = h / groups;
    for (int t = 0; t < kTokens; ++t) {
      const double* qt = &q[(static_cast<size_t>(t) * kHeads + h) * kHeadDim];
      double max = -INFINITY;
      for (int s = 0; s <= t; ++s) {
        const double* ks = &k[(static_cast<size_t>(s) * kKvHeads + kv) * kHeadDim];
        double dot = 0.0;
        for (int d = 0; d < kHeadDim; ++d) dot += qt[d] * ks[d];
        p[s] = dot * scale;
        max = std::max(max, p[s]);
      }
      double total = 0.0;
      for (int s = 0; s <= t; ++s) total += (p[s] = std::exp(p[s] - max));
      double* ot = &o[(static_cast<size_t>(t) * kHeads + h) * kHeadDim];
      for (int s = 0; s <= t; ++s) {
        const double* vs = &v[(static_cast<size_t>(s) * kKvHeads + kv) * kHeadDim];
        for (int d = 0; d < kHeadDim; ++d) ot[d] += p[s] / total * vs[d];
      }
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const double eps = argc > 1 ? std::atof(argv[1]) : 1e-6;
  std::printf("decoder layer: %d tokens, hidden %d, %d heads (%d KV) of %d, "
              "intermediate %d, %s biases, eps %g\n",
              kTokens, kHidden, kHeads, kKvHeads, kHeadDim, kIntermediate,
              kBiases ? "q/k/v" : "no", eps);

  unsigned long long state = 2026;
  const int q_width = kHeads * kHeadDim, kv_width = kKvHeads * kHeadDim;
  const double in_scale = 1.0 / std::sqrt(static_cast<double>(kHidden));
  Tensor x = random_tensor(DECODER_LAYER_HIDDEN_STATES_ELEMENTS, 0.0, 1.0, state);
  Tensor cos(DECODER_LAYER_COS_ELEMENTS), sin(DECODER_LAYER_SIN_ELEMENTS);
  for (int t = 0; t < kTokens; ++t) {
    for (int d = 0; d < kHeadDim; ++d) {
      // Hugging Face's rotary embedding: the frequencies repeated twice.
      const int i = d % (kHeadDim / 2);
      const double angle = t / std::pow(10000.0, 2.0 * i / kHeadDim);
      cos.host[static_cast<size_t>(t) * kHeadDim + d] = std::cos(angle);
      sin.host[static_cast<size_t>(t) * kHeadDim + d] = std::sin(angle);
    }
  }
  Tensor norm1 = random_tensor(DECODER_LAYER_INPUT_LAYERNORM_ELEMENTS, 1.0, 0.1, state);
  Tensor wq = random_tensor(DECODER_LAYER_Q_PROJ_ELEMENTS, 0.0, in_scale, state);
  Tensor wk = random_tensor(DECODER_LAYER_K_PROJ_ELEMENTS, 0.0, in_scale, state);
  Tensor wv = random_tensor(DECODER_LAYER_V_PROJ_ELEMENTS, 0.0, in_scale, state);
#ifdef DECODER_LAYER_Q_PROJ_BIAS_ELEMENTS
  Tensor bq = random_tensor(DECODER_LAYER_Q_PROJ_BIAS_ELEMENTS, 0.0, 0.1, state);
  Tensor bk = random_tensor(DECODER_LAYER_K_PROJ_BIAS_ELEMENTS, 0.0, 0.1, state);
  Tensor bv = random_tensor(DECODER_LAYER_V_PROJ_BIAS_ELEMENTS, 0.0, 0.1, state);
#endif
  Tensor wo = random_tensor(DECODER_LAYER_O_PROJ_ELEMENTS, 0.0,
                            1.0 / std::sqrt(static_cast<double>(q_width)), state);
  Tensor norm2 =
      random_tensor(DECODER_LAYER_POST_ATTENTION_LAYERNORM_ELEMENTS, 1.0, 0.1, state);
  Tensor wg = random_tensor(DECODER_LAYER_GATE_PROJ_ELEMENTS, 0.0, in_scale, state);
  Tensor wu = random_tensor(DECODER_LAYER_UP_PROJ_ELEMENTS, 0.0, in_scale, state);
  Tensor wd = random_tensor(DECODER_LAYER_DOWN_PROJ_ELEMENTS, 0.0,
                            1.0 / std::sqrt(static_cast<double>(kIntermediate)), state);
  std::vector<Tensor*> inputs = {&x, &cos, &sin, &norm1, &wq, &wk, &wv, &wo,
                                 &norm2, &wg, &wu, &wd};
#ifdef DECODER_LAYER_Q_PROJ_BIAS_ELEMENTS
  inputs.insert(inputs.end(), {&bq, &bk, &bv});
#endif
  for (Tensor* t : inputs) {
    if (!t->upload()) return 2;
  }
  Element* out = nullptr;
  const size_t out_bytes = DECODER_LAYER_OUT_ELEMENTS * sizeof(Element);
  if (!check(cudaMalloc(&out, out_bytes), "cudaMalloc out")) return 2;
  cudaMemset(out, 0xff, out_bytes);  // poison: all-ones bytes are NaN

  cudaStream_t stream;
  cudaStreamCreate(&stream);
  auto run = [&]() {
    return decoder_layer(x.device, cos.device, sin.device, norm1.device, wq.device,
                         wk.device, wv.device,
#ifdef DECODER_LAYER_Q_PROJ_BIAS_ELEMENTS
                         bq.device, bk.device, bv.device,
#endif
                         wo.device, norm2.device, wg.device, wu.device, wd.device, out,
                         stream);
  };
  if (!check(run(), "decoder_layer") ||
      !check(cudaStreamSynchronize(stream), "the layer's kernels")) {
    return 2;
  }
  std::vector<Element> got(DECODER_LAYER_OUT_ELEMENTS);
  cudaMemcpy(got.data(), out, out_bytes, cudaMemcpyDeviceToHost);

  // The reference, as modeling_qwen2 / modeling_llama write the layer.
  const Tensor* no_bias = nullptr;
  Matrix h = rms_norm(x.host, norm1.host, kTokens, kHidden, eps);
#ifdef DECODER_LAYER_Q_PROJ_BIAS_ELEMENTS
  const Tensor *q_bias = &bq, *k_bias = &bk, *v_bias = &bv;
#else
  const Tensor *q_bias = no_bias, *k_bias = no_bias, *v_bias = no_bias;
#endif
  Matrix q = linear(h, wq, q_bias, kTokens, kHidden, q_width);
  Matrix k = linear(h, wk, k_bias, kTokens, kHidden, kv_width);
  Matrix v = linear(h, wv, v_bias, kTokens, kHidden, kv_width);
  rope(q, cos, sin, kHeads);
  rope(k, cos, sin, kKvHeads);
  Matrix o = linear(attention(q, k, v), wo, no_bias, kTokens, q_width, kHidden);
  Matrix residual(x.host);
  for (size_t i = 0; i < residual.size(); ++i) residual[i] += o[i];
  Matrix h2 = rms_norm(residual, norm2.host, kTokens, kHidden, eps);
  Matrix gate = linear(h2, wg, no_bias, kTokens, kHidden, kIntermediate);
  Matrix up = linear(h2, wu, no_bias, kTokens, kHidden, kIntermediate);
  for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
  Matrix down = linear(gate, wd, no_bias, kTokens, kIntermediate, kHidden);

  size_t nans = 0;
  auto relative_error = [&](const std::vector<Element>& values) {
    double error = 0.0, total = 0.0;
    for (size_t i = 0; i < values.size(); ++i) {
      const double want = residual[i] + down[i];
      const double value = __bfloat162float(values[i]);
      if (std::isnan(value)) ++nans;
      error += (value - want) * (value - want);
      total += want * want;
    }
    return std::sqrt(error / total);
  };
  const double relative = relative_error(got);
  std::printf("relative L2 error against the CPU's float64 layer %.2e, %zu NaN\n",
              relative, nans);

  // The same launcher captured into a CUDA graph (its cudaMallocAsync,
  // cudaMemsetAsync and launches on `stream` become the graph's nodes) and
  // replayed into the poisoned output.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t replay = nullptr;
  if (!check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
             "cudaStreamBeginCapture") ||
      !check(run(), "decoder_layer under capture") ||
      !check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture") ||
      !check(cudaGraphInstantiate(&replay, graph, 0), "cudaGraphInstantiate")) {
    return 2;
  }
  cudaMemset(out, 0xff, out_bytes);
  if (!check(cudaGraphLaunch(replay, stream), "cudaGraphLaunch") ||
      !check(cudaStreamSynchronize(stream), "the replayed graph")) {
    return 2;
  }
  cudaMemcpy(got.data(), out, out_bytes, cudaMemcpyDeviceToHost);
  const double replayed = relative_error(got);
  std::printf("replayed as a CUDA graph: relative L2 error %.2e, %zu NaN in all\n",
              replayed, nans);

  // The launcher's time: the median of 20 calls (L2 not flushed).
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> times;
  for (int i = 0; i < 21; ++i) {
    cudaEventRecord(start, stream);
    run();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    if (i > 0) times.push_back(ms);  // the first call warms up
  }
  std::sort(times.begin(), times.end());
  std::printf("decoder_layer: %.1f us a call (median of %zu)\n",
              1e3 * times[times.size() / 2], times.size());
  times.clear();
  for (int i = 0; i < 21; ++i) {
    cudaEventRecord(start, stream);
    cudaGraphLaunch(replay, stream);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    if (i > 0) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  std::printf("decoder_layer replayed: %.1f us a call (median of %zu)\n",
              1e3 * times[times.size() / 2], times.size());
  cudaGraphExecDestroy(replay);
  cudaGraphDestroy(graph);

  for (Tensor* t : inputs) cudaFree(t->device);
  cudaFree(out);
  cudaStreamDestroy(stream);
  const bool ok = nans == 0 && relative < kTolerance && replayed < kTolerance;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
