// RUN: molten-opt %s --split-input-file -p vectorize | filecheck %s

// vectorize: scalar accesses of consecutive elements through one global
// pointer, in one block, whose first index is proven a multiple of the width
// (linear forms over the index arithmetic, divisors of their leaves), become
// one access of up to 16 bytes; a kernel so changed keeps its scalar variant
// (@<name>_scalar), and its launches name the pointers that must be 16-byte
// aligned and the variant to launch when one is not. Each case shows the
// kernel before (the input) and after (CHECK).

// Four f32 loads at 4t .. 4t+3 (in any order) and four stores back: one
// 128-bit load where the first load was, one 128-bit store where the last
// store was; the scalar variant is the kernel as it came in.
cuda.kernel @quad(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %t = cuda.thread_idx x
  %i = arith.muli %t, %c4 : index
  %i1 = arith.addi %i, %c1 : index
  %i2 = arith.addi %i, %c2 : index
  %i3 = arith.addi %i, %c3 : index
  %b = cuda.load %x[%i1] : !cuda.ptr<f32> -> f32
  %a = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
  %c = cuda.load %x[%i2] : !cuda.ptr<f32> -> f32
  %d = cuda.load %x[%i3] : !cuda.ptr<f32> -> f32
  cuda.store %d, %y[%i3] : f32, !cuda.ptr<f32>
  cuda.store %c, %y[%i2] : f32, !cuda.ptr<f32>
  cuda.store %b, %y[%i1] : f32, !cuda.ptr<f32>
  cuda.store %a, %y[%i] : f32, !cuda.ptr<f32>
  cuda.return
}
cuda.host_func @graph(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
  cuda.launch @quad grid [1, 1, 1] block [64, 1, 1] (%x, %y) : !cuda.ptr<f32>, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @quad(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
// CHECK:         %i3 = arith.addi %i, %c3 : index
// CHECK-NEXT:    %a, %b, %c, %d = cuda.load %x[%i] : !cuda.ptr<f32> -> f32, f32, f32, f32
// CHECK-NEXT:    cuda.store %a, %b, %c, %d, %y[%i] : f32, f32, f32, f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.kernel @quad_scalar(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
// CHECK:         %b = cuda.load %x[%i1] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %a = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %c = cuda.load %x[%i2] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %d = cuda.load %x[%i3] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    cuda.store %d, %y[%i3] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.store %c, %y[%i2] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.store %b, %y[%i1] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.store %a, %y[%i] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @graph(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
// CHECK-NEXT:    cuda.launch @quad grid [1, 1, 1] block [64, 1, 1](%x, %y) aligned [0, 1] else @quad_scalar : !cuda.ptr<f32>, !cuda.ptr<f32>

// -----

// Eight f16 elements of a row: the row offset row * 64 (a loop's induction
// variable times 64) plus the column 8t, read through a remsi: one 16-byte
// load. Only the loaded pointer is named in `aligned`.
cuda.kernel @row_f16(%x: !cuda.ptr<f16>, %y: !cuda.ptr<f32>) block 8 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %t = cuda.thread_idx x
  %t8 = arith.muli %t, %c8 : index
  %col = arith.remsi %t8, %c64 : index
  scf.for %row = %c0 to %c8 step %c1 {
    %base = arith.muli %row, %c64 : index
    %j = arith.addi %base, %col : index
    %j1 = arith.addi %j, %c1 : index
    %j2 = arith.addi %j, %c2 : index
    %j3 = arith.addi %j, %c3 : index
    %j4 = arith.addi %j, %c4 : index
    %j5 = arith.addi %j, %c5 : index
    %j6 = arith.addi %j, %c6 : index
    %j7 = arith.addi %j, %c7 : index
    %h0 = cuda.load %x[%j] : !cuda.ptr<f16> -> f16
    %h1 = cuda.load %x[%j1] : !cuda.ptr<f16> -> f16
    %h2 = cuda.load %x[%j2] : !cuda.ptr<f16> -> f16
    %h3 = cuda.load %x[%j3] : !cuda.ptr<f16> -> f16
    %h4 = cuda.load %x[%j4] : !cuda.ptr<f16> -> f16
    %h5 = cuda.load %x[%j5] : !cuda.ptr<f16> -> f16
    %h6 = cuda.load %x[%j6] : !cuda.ptr<f16> -> f16
    %h7 = cuda.load %x[%j7] : !cuda.ptr<f16> -> f16
    %f = arith.extf %h7 : f16 to f32
    cuda.store %f, %y[%row] : f32, !cuda.ptr<f32>
  }
  cuda.return
}
cuda.host_func @graph(%x: !cuda.ptr<f16>, %y: !cuda.ptr<f32>) outputs 1 {
  cuda.launch @row_f16 grid [1, 1, 1] block [8, 1, 1] (%x, %y) : !cuda.ptr<f16>, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @row_f16(%x: !cuda.ptr<f16>, %y: !cuda.ptr<f32>) block 8 {
// CHECK:           %j7 = arith.addi %j, %c7 : index
// CHECK-NEXT:      %h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7 = cuda.load %x[%j] : !cuda.ptr<f16> -> f16, f16, f16, f16, f16, f16, f16, f16
// CHECK-NEXT:      %f = arith.extf %h7 : f16 to f32
// CHECK-NEXT:      cuda.store %f, %y[%row] : f32, !cuda.ptr<f32>
// CHECK:       cuda.kernel @row_f16_scalar(
// CHECK:         cuda.launch @row_f16 grid [1, 1, 1] block [8, 1, 1](%x, %y) aligned [0] else @row_f16_scalar : !cuda.ptr<f16>, !cuda.ptr<f32>

// -----

// Runs that do not start aligned: 4t+1 .. 4t+4 holds one aligned pair (4t+2,
// 4t+3), which becomes a 64-bit load; 4t+1 and 4t+4 stay scalar.
cuda.kernel @shifted(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %t = cuda.thread_idx x
  %i = arith.muli %t, %c4 : index
  %i1 = arith.addi %i, %c1 : index
  %i2 = arith.addi %i, %c2 : index
  %i3 = arith.addi %i, %c3 : index
  %i4 = arith.addi %i, %c4 : index
  %a = cuda.load %x[%i1] : !cuda.ptr<f32> -> f32
  %b = cuda.load %x[%i2] : !cuda.ptr<f32> -> f32
  %c = cuda.load %x[%i3] : !cuda.ptr<f32> -> f32
  %d = cuda.load %x[%i4] : !cuda.ptr<f32> -> f32
  %s = arith.addf %a, %b : f32
  %u = arith.addf %c, %d : f32
  %v = arith.addf %s, %u : f32
  cuda.store %v, %y[%t] : f32, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @shifted(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
// CHECK:         %i4 = arith.addi %i, %c4 : index
// CHECK-NEXT:    %a = cuda.load %x[%i1] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %b, %c = cuda.load %x[%i2] : !cuda.ptr<f32> -> f32, f32
// CHECK-NEXT:    %d = cuda.load %x[%i4] : !cuda.ptr<f32> -> f32
// CHECK:       cuda.kernel @shifted_scalar(

// -----

// Nothing proven: indices t, t+1 (t has no known divisor); 4t and 4t+1 in
// two blocks (4t outside, 4t+1 in an scf.if); a store to the same pointer
// between two loads of it; shared memory. The kernel is left as it is, with
// no variant.
cuda.kernel @unproven(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %t = cuda.thread_idx x
  %t1 = arith.addi %t, %c1 : index
  %p0 = cuda.load %x[%t] : !cuda.ptr<f32> -> f32
  %p1 = cuda.load %x[%t1] : !cuda.ptr<f32> -> f32
  %i = arith.muli %t, %c4 : index
  %i1 = arith.addi %i, %c1 : index
  %i2 = arith.addi %i, %c2 : index
  %first = arith.cmpi eq, %t, %c1 : index
  %q0 = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
  scf.if %first {
    %q1 = cuda.load %x[%i1] : !cuda.ptr<f32> -> f32
    cuda.store %q1, %y[%t] : f32, !cuda.ptr<f32>
  }
  %r0 = cuda.load %y[%i] : !cuda.ptr<f32> -> f32
  cuda.store %r0, %y[%i2] : f32, !cuda.ptr<f32>
  %r1 = cuda.load %y[%i1] : !cuda.ptr<f32> -> f32
  %s = cuda.shared_alloc 256 : !cuda.ptr<f32, shared>
  %s0 = cuda.load %s[%i] : !cuda.ptr<f32, shared> -> f32
  %s1 = cuda.load %s[%i1] : !cuda.ptr<f32, shared> -> f32
  cuda.return
}

// CHECK-LABEL: cuda.kernel @unproven(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %t = cuda.thread_idx x
// CHECK-NEXT:    %t1 = arith.addi %t, %c1 : index
// CHECK-NEXT:    %p0 = cuda.load %x[%t] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %p1 = cuda.load %x[%t1] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %i = arith.muli %t, %c4 : index
// CHECK-NEXT:    %i1 = arith.addi %i, %c1 : index
// CHECK-NEXT:    %i2 = arith.addi %i, %c2 : index
// CHECK-NEXT:    %first = arith.cmpi eq, %t, %c1 : index
// CHECK-NEXT:    %q0 = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    scf.if %first {
// CHECK-NEXT:      %q1 = cuda.load %x[%i1] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:      cuda.store %q1, %y[%t] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %r0 = cuda.load %y[%i] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    cuda.store %r0, %y[%i2] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    %r1 = cuda.load %y[%i1] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %s = cuda.shared_alloc 256 : !cuda.ptr<f32, shared>
// CHECK-NEXT:    %s0 = cuda.load %s[%i] : !cuda.ptr<f32, shared> -> f32
// CHECK-NEXT:    %s1 = cuda.load %s[%i1] : !cuda.ptr<f32, shared> -> f32
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }

// -----

// A launch with a variant already (a tensor-core gemm and its SIMT kernel):
// its kernel is vectorized in place, the pointer it now stores by vectors
// joins `aligned`, no scalar variant is made and the variant is left as it is.
cuda.kernel @paired(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = cuda.thread_idx x
  %i = arith.muli %t, %c2 : index
  %i1 = arith.addi %i, %c1 : index
  %a = cuda.load %x[%t] : !cuda.ptr<f32> -> f32
  cuda.store %a, %y[%i] : f32, !cuda.ptr<f32>
  cuda.store %a, %y[%i1] : f32, !cuda.ptr<f32>
  cuda.return
}
cuda.kernel @paired_simt(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = cuda.thread_idx x
  %i = arith.muli %t, %c2 : index
  %i1 = arith.addi %i, %c1 : index
  %a = cuda.load %x[%t] : !cuda.ptr<f32> -> f32
  cuda.store %a, %y[%i] : f32, !cuda.ptr<f32>
  cuda.store %a, %y[%i1] : f32, !cuda.ptr<f32>
  cuda.return
}
cuda.host_func @graph(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
  cuda.launch @paired grid [1, 1, 1] block [64, 1, 1] (%x, %y) aligned [0] else @paired_simt : !cuda.ptr<f32>, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @paired(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
// CHECK:         %a = cuda.load %x[%t] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    cuda.store %a, %a, %y[%i] : f32, f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.kernel @paired_simt(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 64 {
// CHECK:         cuda.store %a, %y[%i] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.store %a, %y[%i1] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @graph(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
// CHECK-NEXT:    cuda.launch @paired grid [1, 1, 1] block [64, 1, 1](%x, %y) aligned [0, 1] else @paired_simt : !cuda.ptr<f32>, !cuda.ptr<f32>

// -----

// A kernel over T rows of 32 (T a parameter): the row's offset row * 32 is a
// multiple of 4 whatever T is, so the four loads of a thread are one.
// CHECK-LABEL: cuda.kernel @rows(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) block 8 {
// CHECK:         scf.for %row = %bid to %T step %gdim {
// CHECK:           %a, %b, %c, %d = cuda.load %x[%o0] : !cuda.ptr<f32> -> f32, f32, f32, f32
// CHECK-NEXT:      cuda.store %a, %b, %c, %d, %y[%o0] : f32, f32, f32, f32, !cuda.ptr<f32>
// CHECK-LABEL: cuda.kernel @rows_scalar(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) block 8 {
cuda.kernel @rows(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) block 8 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %tid = cuda.thread_idx x
  %bid = cuda.block_idx x
  %gdim = cuda.grid_dim x
  %col = arith.muli %tid, %c4 : index
  scf.for %row = %bid to %T step %gdim {
    %base = arith.muli %row, %c32 : index
    %o0 = arith.addi %base, %col : index
    %o1 = arith.addi %o0, %c1 : index
    %o2 = arith.addi %o0, %c2 : index
    %o3 = arith.addi %o0, %c3 : index
    %a = cuda.load %x[%o0] : !cuda.ptr<f32> -> f32
    %b = cuda.load %x[%o1] : !cuda.ptr<f32> -> f32
    %c = cuda.load %x[%o2] : !cuda.ptr<f32> -> f32
    %d = cuda.load %x[%o3] : !cuda.ptr<f32> -> f32
    cuda.store %a, %y[%o0] : f32, !cuda.ptr<f32>
    cuda.store %b, %y[%o1] : f32, !cuda.ptr<f32>
    cuda.store %c, %y[%o2] : f32, !cuda.ptr<f32>
    cuda.store %d, %y[%o3] : f32, !cuda.ptr<f32>
  }
  cuda.return
}
