// RUN: molten-opt %s | filecheck %s
// RUN: molten-opt %s -p MOLTEN_DEFAULT_PIPELINE | molten-opt | filecheck %s --check-prefix=CUDA
// RUN: molten-opt %s -p MOLTEN_DEFAULT_PIPELINE -t cuda-header | filecheck %s --check-prefix=HEADER

// xDSL drops a trailing _<digits> from SSA names: %h_0 and %h_1 both read
// back as %h. Molten keeps each input's name as written, in a molten.name
// attribute where the SSA name cannot carry it, down to the C++ launcher.

func.func @g(%h_0: tensor<4xf32>, %h_1: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = molten.add %h_0, %h_1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %z = molten.mul %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}

// CHECK: func.func @g(%h: tensor<4xf32> {molten.name = "h_0"}, %h_1: tensor<4xf32> {molten.name = "h_1"}, %x: tensor<4xf32>) -> tensor<4xf32> {

// CUDA: cuda.host_func @g(%h: !cuda.ptr<f32>, %h_1: !cuda.ptr<f32>, %x: !cuda.ptr<f32>, %z: !cuda.ptr<f32>) outputs 1 shapes [[4], [4], [4], [4]] attributes {param_names = ["h_0", "h_1", "x", "z"]} {

// HEADER: cudaError_t g(const float* h_0, const float* h_1, const float* x, float* z, cudaStream_t stream);
