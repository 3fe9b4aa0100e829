// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// Pointwise kernels: a grid-stride loop over the elements.
//
// lower-kernel-to-cuda on hand-written kernel-level modules (kernel.func with
// a schedule, and the graph's func.func of kernel.launch): each kernel.func
// becomes a cuda.kernel over global pointers (its inputs, then its outputs,
// named after the kernel's values), the graph a cuda.host_func (the graph's
// inputs, then its outputs, named after the graph: molten.name, else the
// value's name) that launches the kernels with the grid and block of their
// schedules and allocates the buffers between them. SSA names inside kernels
// are matched by pattern: the pass chooses them.

// f16 with a broadcast row vector: a grid-stride loop over the 64x96
// elements, f16 loaded and extended to f32, the row vector read at the
// column only, the result truncated to f16 on store. The grid covers the
// elements with block * elements_per_thread = 256 elements per block.
kernel.func @bias_relu(%x: tensor<64x96xf16>, %b: tensor<96xf16>) -> (tensor<64x96xf16>) pointwise schedule #kernel.schedule<pointwise, block = 128, elements_per_thread = 2> attributes {fused_ops = ["add", "relu"]} {
  %sum = molten.add %x, %b : (tensor<64x96xf16>, tensor<96xf16>) -> tensor<64x96xf16>
  %y = molten.relu %sum : tensor<64x96xf16>
  kernel.yield %y : tensor<64x96xf16>
}
func.func @pointwise(%x: tensor<64x96xf16>, %b: tensor<96xf16>) -> (tensor<64x96xf16> {molten.name = "out"}) {
  %y = kernel.launch @bias_relu(%x, %b) : (tensor<64x96xf16>, tensor<96xf16>) -> tensor<64x96xf16>
  func.return %y : tensor<64x96xf16>
}

// CHECK-LABEL: cuda.kernel @bias_relu(%x: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) block 128 attributes {fused_ops = ["add", "relu"]} {
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     [[C96:%[^ ]+]] = arith.constant 96 : index
// CHECK-DAG:     [[N:%[^ ]+]] = arith.constant 6144 : index
// CHECK:         [[TID:%[^ ]+]] = cuda.thread_idx x
// CHECK-NEXT:    [[BID:%[^ ]+]] = cuda.block_idx x
// CHECK-NEXT:    [[BDIM:%[^ ]+]] = cuda.block_dim x
// CHECK-NEXT:    [[GDIM:%[^ ]+]] = cuda.grid_dim x
// CHECK-NEXT:    [[BASE:%[^ ]+]] = arith.muli [[BID]], [[BDIM]] : index
// CHECK-NEXT:    [[START:%[^ ]+]] = arith.addi [[BASE]], [[TID]] : index
// CHECK-NEXT:    [[STEP:%[^ ]+]] = arith.muli [[BDIM]], [[GDIM]] : index
// CHECK-NEXT:    scf.for [[I:%[^ ]+]] = [[START]] to [[N]] step [[STEP]] {
// CHECK-NEXT:      [[COL:%[^ ]+]] = arith.remsi [[I]], [[C96]] : index
// CHECK-NEXT:      [[ROW:%[^ ]+]] = arith.divsi [[I]], [[C96]] : index
// CHECK-NEXT:      [[ROWBASE:%[^ ]+]] = arith.muli [[ROW]], [[C96]] : index
// CHECK-NEXT:      [[XOFF:%[^ ]+]] = arith.addi [[ROWBASE]], [[COL]] : index
// CHECK-NEXT:      [[XH:%[^ ]+]] = cuda.load %x{{\[}}[[XOFF]]{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NEXT:      [[XF:%[^ ]+]] = arith.extf [[XH]] : f16 to f32
// CHECK-NEXT:      [[BH:%[^ ]+]] = cuda.load %b{{\[}}[[COL]]{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NEXT:      [[BF:%[^ ]+]] = arith.extf [[BH]] : f16 to f32
// CHECK-NEXT:      [[SUM:%[^ ]+]] = arith.addf [[XF]], [[BF]] : f32
// CHECK-NEXT:      [[RELU:%[^ ]+]] = arith.maximumf [[SUM]], [[ZERO]] : f32
// CHECK:           [[YOFF:%[^ ]+]] = arith.addi {{%[^ ]+}}, [[COL]] : index
// CHECK-NEXT:      [[YH:%[^ ]+]] = arith.truncf [[RELU]] : f32 to f16
// CHECK-NEXT:      cuda.store [[YH]], %y{{\[}}[[YOFF]]{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @pointwise(%x: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %out: !cuda.ptr<f16>) outputs 1 shapes [[64, 96], [96], [64, 96]] {
// CHECK-NEXT:    cuda.launch @bias_relu grid [24, 1, 1] block [128, 1, 1](%x, %b, %out) : !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// Windows: a slice reads at the index shifted by its start; a pad reads its
// input at the index less `before`, clamped into the input (0 outside), and
// selects 0 there, so no load leaves the input.
kernel.func @window_k(%x: tensor<4x8xf32>) -> (tensor<4x9xf32>) pointwise schedule #kernel.schedule<pointwise, block = 32, elements_per_thread = 1> {
  %s = molten.slice %x axis = 1 start = 2 : tensor<4x8xf32> -> tensor<4x5xf32>
  %p = molten.pad %s axis = 1 before = 3 : tensor<4x5xf32> -> tensor<4x9xf32>
  kernel.yield %p : tensor<4x9xf32>
}
func.func @window(%x: tensor<4x8xf32>) -> tensor<4x9xf32> {
  %p = kernel.launch @window_k(%x) : (tensor<4x8xf32>) -> tensor<4x9xf32>
  func.return %p : tensor<4x9xf32>
}

// CHECK-LABEL: cuda.kernel @window_k(%x: !cuda.ptr<f32>, %p: !cuda.ptr<f32>) block 32 {
// CHECK:         %[[J:.*]] = arith.subi %[[COL:.*]], %{{.*}} : index
// CHECK-NEXT:    %[[LO:.*]] = arith.cmpi sge, %[[J]], %{{.*}} : index
// CHECK-NEXT:    %[[HI:.*]] = arith.cmpi slt, %[[J]], %{{.*}} : index
// CHECK-NEXT:    %[[IN:.*]] = arith.andi %[[LO]], %[[HI]] : i1
// CHECK-NEXT:    %[[CLAMPED:.*]] = arith.select %[[IN]], %[[J]], %{{.*}} : index
// CHECK-NEXT:    %[[SHIFTED:.*]] = arith.addi %[[CLAMPED]], %{{.*}} : index
// CHECK:         %[[X:.*]] = cuda.load %x[%{{.*}}] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %{{.*}} = arith.select %[[IN]], %[[X]], %{{.*}} : f32

// -----

// tril: the element where column - row <= diagonal, else 0 (a select, so an
// inf above the diagonal is 0).
kernel.func @lower_k(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise schedule #kernel.schedule<pointwise, block = 32, elements_per_thread = 1> {
  %l = molten.tril %x diagonal = -1 : tensor<4x8xf32>
  kernel.yield %l : tensor<4x8xf32>
}
func.func @lower(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %l = kernel.launch @lower_k(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %l : tensor<4x8xf32>
}

// CHECK-LABEL: cuda.kernel @lower_k(%x: !cuda.ptr<f32>, %l: !cuda.ptr<f32>) block 32 {
// CHECK:         %[[COL:.*]] = arith.remsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.divsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[OFFSET:.*]] = arith.subi %[[COL]], %[[ROW]] : index
// CHECK-NEXT:    %[[KEPT:.*]] = arith.cmpi sle, %[[OFFSET]], %{{.*}} : index
// CHECK:         %[[X:.*]] = cuda.load %x[%{{.*}}] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %{{.*}} = arith.select %[[KEPT]], %[[X]], %{{.*}} : f32

// -----

// Integers: i8 scalars of their own type, a floor division whose divisor 0
// is replaced by 1 before it and whose result there is -1 (as torch's CUDA
// kernels give).
kernel.func @floor_i8(%a: tensor<4x8xi8>, %b: tensor<4x8xi8>) -> (tensor<4x8xi8>) pointwise schedule #kernel.schedule<pointwise, block = 32, elements_per_thread = 1> attributes {fused_ops = ["floor_divide"]} {
  %q = molten.floor_divide %a, %b : (tensor<4x8xi8>, tensor<4x8xi8>) -> tensor<4x8xi8>
  kernel.yield %q : tensor<4x8xi8>
}
func.func @floor(%a: tensor<4x8xi8>, %b: tensor<4x8xi8>) -> (tensor<4x8xi8> {molten.name = "q"}) {
  %q = kernel.launch @floor_i8(%a, %b) : (tensor<4x8xi8>, tensor<4x8xi8>) -> tensor<4x8xi8>
  func.return %q : tensor<4x8xi8>
}

// CHECK-LABEL: cuda.kernel @floor_i8(%a: !cuda.ptr<i8>, %b: !cuda.ptr<i8>, %q: !cuda.ptr<i8>) block 32
// CHECK-DAG:     [[MINUS:%[^ ]+]] = arith.constant -1 : i8
// CHECK-DAG:     [[ONE:%[^ ]+]] = arith.constant 1 : i8
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0 : i8
// CHECK:           %a_1 = cuda.load %a[%a_offset] : !cuda.ptr<i8> -> i8
// CHECK:           %b_1 = cuda.load %b[%b_offset] : !cuda.ptr<i8> -> i8
// CHECK-NEXT:      [[BY_ZERO:%[^ ]+]] = arith.cmpi eq, %b_1, [[ZERO]] : i8
// CHECK-NEXT:      [[DIVISOR:%[^ ]+]] = arith.select [[BY_ZERO]], [[ONE]], %b_1 : i8
// CHECK-NEXT:      [[QUOTIENT:%[^ ]+]] = arith.floordivsi %a_1, [[DIVISOR]] : i8
// CHECK-NEXT:      %q_1 = arith.select [[BY_ZERO]], [[MINUS]], [[QUOTIENT]] : i8
// CHECK:           cuda.store %q_1, %q[{{%[^ ]+}}] : i8, !cuda.ptr<i8>

// -----

// A lookup: the id read, clamped into the table's rows, then the row read at
// it (an id out of range reads the nearest row, never outside the table).
kernel.func @lookup(%t: tensor<100x8xbf16>, %ids: tensor<3xi64>) -> (tensor<3x8xbf16>) pointwise schedule #kernel.schedule<pointwise, block = 32, elements_per_thread = 1> attributes {fused_ops = ["take"]} {
  %e = molten.take %t, %ids axis = 0 : (tensor<100x8xbf16>, tensor<3xi64>) -> tensor<3x8xbf16>
  kernel.yield %e : tensor<3x8xbf16>
}
func.func @embed(%t: tensor<100x8xbf16>, %ids: tensor<3xi64>) -> (tensor<3x8xbf16> {molten.name = "e"}) {
  %e = kernel.launch @lookup(%t, %ids) : (tensor<100x8xbf16>, tensor<3xi64>) -> tensor<3x8xbf16>
  func.return %e : tensor<3x8xbf16>
}

// CHECK-LABEL: cuda.kernel @lookup(%t: !cuda.ptr<bf16>, %ids: !cuda.ptr<i64>, %e: !cuda.ptr<bf16>) block 32
// CHECK-DAG:     [[LAST:%[^ ]+]] = arith.constant 99 : index
// CHECK-DAG:     [[FIRST:%[^ ]+]] = arith.constant 0 : index
// CHECK:           %ids_1 = cuda.load %ids[%ids_offset] : !cuda.ptr<i64> -> i64
// CHECK-NEXT:      [[ID:%[^ ]+]] = arith.index_cast %ids_1 : i64 to index
// CHECK-NEXT:      [[ABOVE:%[^ ]+]] = arith.maxsi [[ID]], [[FIRST]] : index
// CHECK-NEXT:      [[ROW:%[^ ]+]] = arith.minsi [[ABOVE]], [[LAST]] : index
// CHECK-NEXT:      [[BASE:%[^ ]+]] = arith.muli [[ROW]], {{%[^ ]+}} : index
// CHECK-NEXT:      %t_offset = arith.addi [[BASE]], {{%[^ ]+}} : index
// CHECK-NEXT:      {{%[^ ]+}} = cuda.load %t[%t_offset] : !cuda.ptr<bf16> -> bf16

// -----

// An argmax evaluated per element (an op a pointwise kernel reads, not a
// row reduction): the first element starts the best value and column, a loop
// takes the rest (a later equal element does not replace it), and the
// column is the position.
kernel.func @k(%x: tensor<3x5xf32>) -> (tensor<3xi64>) pointwise schedule #kernel.schedule<pointwise, block = 32, elements_per_thread = 1> {
  %i = molten.argmax %x axes = [1] : tensor<3x5xf32> -> tensor<3xi64>
  kernel.yield %i : tensor<3xi64>
}
func.func @g(%x: tensor<3x5xf32>) -> (tensor<3xi64> {molten.name = "top"}) {
  %r = kernel.launch @k(%x) : (tensor<3x5xf32>) -> tensor<3xi64>
  func.return %r : tensor<3xi64>
}

// CHECK-LABEL: cuda.kernel @k(%x: !cuda.ptr<f32>, %i: !cuda.ptr<i64>) block 32
// CHECK-DAG:     [[ONE:%[^ ]+]] = arith.constant 1 : index
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0 : index
// CHECK-DAG:     [[FIVE:%[^ ]+]] = arith.constant 5 : index
// CHECK:         %x_1 = cuda.load %x[%x_offset] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    [[BEST:%[^ ]+]], [[AT:%[^ ]+]] = scf.for [[J:%[^ ]+]] = [[ONE]] to [[FIVE]] step [[ONE]] iter_args([[B:%[^ ]+]] = %x_1, [[C:%[^ ]+]] = [[ZERO]]) -> (f32, index) {
// CHECK:           %x_2 = cuda.load %x[%x_offset_1] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:      [[BEYOND:%[^ ]+]] = arith.cmpf ugt, %x_2, [[B]] : f32
// CHECK-NEXT:      [[SETTLED:%[^ ]+]] = arith.cmpf ord, [[B]], [[B]] : f32
// CHECK-NEXT:      [[TAKEN:%[^ ]+]] = arith.andi [[BEYOND]], [[SETTLED]] : i1
// CHECK-NEXT:      [[NEW_B:%[^ ]+]] = arith.select [[TAKEN]], %x_2, [[B]] : f32
// CHECK-NEXT:      [[NEW_C:%[^ ]+]] = arith.select [[TAKEN]], [[J]], [[C]] : index
// CHECK-NEXT:      scf.yield [[NEW_B]], [[NEW_C]] : f32, index
// CHECK:         arith.index_cast [[AT]] : index to i64
// CHECK:         cuda.store {{%[^ ]+}}, %i[{{%[^ ]+}}] : i64, !cuda.ptr<i64>
