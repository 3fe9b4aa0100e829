// RUN: MOLTEN_ROUNDTRIP
// RUN: MOLTEN_GENERIC_ROUNDTRIP
// RUN: MOLTEN_CUSTOM_ROUNDTRIP

// Every op of the cuda dialect (cuda.kernel, cuda.host_func, the four special
// registers, cuda.load, cuda.store, cuda.shared_alloc, cuda.sync_threads,
// cuda.shfl_xor, cuda.group_barrier, cuda.last_arrival, the tensor-core ops cuda.cp_async,
// cuda.cp_async_commit, cuda.cp_async_wait, cuda.ldmatrix and cuda.mma,
// sm_90a's warpgroup ops cuda.wgmma_descriptor, cuda.wgmma, cuda.wgmma_reg_a,
// cuda.wgmma_fence, cuda.wgmma_commit, cuda.wgmma_wait and
// cuda.fence_proxy_async, cuda.named_barrier, TMA's cuda.mbarrier_init, cuda.fence_mbarrier_init,
// cuda.mbarrier_arrive, cuda.mbarrier_wait, cuda.tma_load and
// cuda.set_max_registers, cuda.launch, cuda.alloc, cuda.free, cuda.zero (and restored),
// cuda.copy, cuda.make_tensor_map, cuda.return)
// and the !cuda.ptr type (global and shared, f32, f16 and bf16), in the
// custom form (CHECK) and the generic form (CHECK-GENERIC); kernels whose
// bodies hold upstream arith, math and scf ops.

// Global pointers of every element type as parameters, shared arrays of every
// element type, loads and stores through both spaces.
cuda.kernel @pointer_types(%x: !cuda.ptr<f32>, %h: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>, %xg: !cuda.ptr<f32>) block 128 {
  %i = cuda.thread_idx x
  %sf = cuda.shared_alloc 128 : !cuda.ptr<f32, shared>
  %sh = cuda.shared_alloc 64 : !cuda.ptr<f16, shared>
  %sb = cuda.shared_alloc 1 : !cuda.ptr<bf16, shared>
  %vx = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
  %vh = cuda.load %h[%i] : !cuda.ptr<f16> -> f16
  %vb = cuda.load %b[%i] : !cuda.ptr<bf16> -> bf16
  cuda.store %vx, %sf[%i] : f32, !cuda.ptr<f32, shared>
  cuda.store %vh, %sh[%i] : f16, !cuda.ptr<f16, shared>
  cuda.store %vb, %sb[%i] : bf16, !cuda.ptr<bf16, shared>
  cuda.sync_threads
  %wx = cuda.load %sf[%i] : !cuda.ptr<f32, shared> -> f32
  %wh = cuda.load %sh[%i] : !cuda.ptr<f16, shared> -> f16
  %wb = cuda.load %sb[%i] : !cuda.ptr<bf16, shared> -> bf16
  cuda.store %wx, %xg[%i] : f32, !cuda.ptr<f32>
  cuda.store %wh, %h[%i] : f16, !cuda.ptr<f16>
  cuda.store %wb, %b[%i] : bf16, !cuda.ptr<bf16>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @pointer_types(%x: !cuda.ptr<f32>, %h: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>, %xg: !cuda.ptr<f32>) block 128 {
// CHECK-NEXT:    %i = cuda.thread_idx x
// CHECK-NEXT:    %sf = cuda.shared_alloc 128 : !cuda.ptr<f32, shared>
// CHECK-NEXT:    %sh = cuda.shared_alloc 64 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %sb = cuda.shared_alloc 1 : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    %vx = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %vh = cuda.load %h[%i] : !cuda.ptr<f16> -> f16
// CHECK-NEXT:    %vb = cuda.load %b[%i] : !cuda.ptr<bf16> -> bf16
// CHECK-NEXT:    cuda.store %vx, %sf[%i] : f32, !cuda.ptr<f32, shared>
// CHECK-NEXT:    cuda.store %vh, %sh[%i] : f16, !cuda.ptr<f16, shared>
// CHECK-NEXT:    cuda.store %vb, %sb[%i] : bf16, !cuda.ptr<bf16, shared>
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    %wx = cuda.load %sf[%i] : !cuda.ptr<f32, shared> -> f32
// CHECK-NEXT:    %wh = cuda.load %sh[%i] : !cuda.ptr<f16, shared> -> f16
// CHECK-NEXT:    %wb = cuda.load %sb[%i] : !cuda.ptr<bf16, shared> -> bf16
// CHECK-NEXT:    cuda.store %wx, %xg[%i] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.store %wh, %h[%i] : f16, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.store %wb, %b[%i] : bf16, !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "pointer_types", function_type = (!cuda.ptr<f32>, !cuda.ptr<f16>, !cuda.ptr<bf16>, !cuda.ptr<f32>) -> (), block = #builtin.int<128>}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%x: !cuda.ptr<f32>, %h: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>, %xg: !cuda.ptr<f32>):
// CHECK-GENERIC-NEXT:    %i = "cuda.thread_idx"() <{dim = #cuda<dim x>}> : () -> index
// CHECK-GENERIC-NEXT:    %sf = "cuda.shared_alloc"() <{size = 128 : i64}> : () -> !cuda.ptr<f32, shared>
// CHECK-GENERIC-NEXT:    %sh = "cuda.shared_alloc"() <{size = 64 : i64}> : () -> !cuda.ptr<f16, shared>
// CHECK-GENERIC-NEXT:    %sb = "cuda.shared_alloc"() <{size = 1 : i64}> : () -> !cuda.ptr<bf16, shared>
// CHECK-GENERIC-NEXT:    %vx = "cuda.load"(%x, %i) : (!cuda.ptr<f32>, index) -> f32
// CHECK-GENERIC-NEXT:    %vh = "cuda.load"(%h, %i) : (!cuda.ptr<f16>, index) -> f16
// CHECK-GENERIC-NEXT:    %vb = "cuda.load"(%b, %i) : (!cuda.ptr<bf16>, index) -> bf16
// CHECK-GENERIC-NEXT:    "cuda.store"(%vx, %sf, %i) : (f32, !cuda.ptr<f32, shared>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.store"(%vh, %sh, %i) : (f16, !cuda.ptr<f16, shared>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.store"(%vb, %sb, %i) : (bf16, !cuda.ptr<bf16, shared>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.sync_threads"() : () -> ()
// CHECK-GENERIC-NEXT:    %wx = "cuda.load"(%sf, %i) : (!cuda.ptr<f32, shared>, index) -> f32
// CHECK-GENERIC-NEXT:    %wh = "cuda.load"(%sh, %i) : (!cuda.ptr<f16, shared>, index) -> f16
// CHECK-GENERIC-NEXT:    %wb = "cuda.load"(%sb, %i) : (!cuda.ptr<bf16, shared>, index) -> bf16
// CHECK-GENERIC-NEXT:    "cuda.store"(%wx, %xg, %i) : (f32, !cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.store"(%wh, %h, %i) : (f16, !cuda.ptr<f16>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.store"(%wb, %b, %i) : (bf16, !cuda.ptr<bf16>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) : () -> ()

// -----

// The special registers in every dimension; `global` written out (the
// default, printed without it); the smallest block.
cuda.kernel @special_registers(%out: !cuda.ptr<f32, global>) block 1 {
  %tx = cuda.thread_idx x
  %ty = cuda.thread_idx y
  %tz = cuda.thread_idx z
  %bx = cuda.block_idx x
  %by = cuda.block_idx y
  %bz = cuda.block_idx z
  %dx = cuda.block_dim x
  %dy = cuda.block_dim y
  %dz = cuda.block_dim z
  %gx = cuda.grid_dim x
  %gy = cuda.grid_dim y
  %gz = cuda.grid_dim z
  %c = arith.constant 0.0 : f32
  cuda.store %c, %out[%tx] : f32, !cuda.ptr<f32, global>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @special_registers(%out: !cuda.ptr<f32>) block 1 {
// CHECK-NEXT:    %tx = cuda.thread_idx x
// CHECK-NEXT:    %ty = cuda.thread_idx y
// CHECK-NEXT:    %tz = cuda.thread_idx z
// CHECK-NEXT:    %bx = cuda.block_idx x
// CHECK-NEXT:    %by = cuda.block_idx y
// CHECK-NEXT:    %bz = cuda.block_idx z
// CHECK-NEXT:    %dx = cuda.block_dim x
// CHECK-NEXT:    %dy = cuda.block_dim y
// CHECK-NEXT:    %dz = cuda.block_dim z
// CHECK-NEXT:    %gx = cuda.grid_dim x
// CHECK-NEXT:    %gy = cuda.grid_dim y
// CHECK-NEXT:    %gz = cuda.grid_dim z
// CHECK-NEXT:    %c = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    cuda.store %c, %out[%tx] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "special_registers", function_type = (!cuda.ptr<f32>) -> (), block = #builtin.int<1>}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%out: !cuda.ptr<f32>):
// CHECK-GENERIC-NEXT:    %tx = "cuda.thread_idx"() <{dim = #cuda<dim x>}> : () -> index
// CHECK-GENERIC-NEXT:    %ty = "cuda.thread_idx"() <{dim = #cuda<dim y>}> : () -> index
// CHECK-GENERIC-NEXT:    %tz = "cuda.thread_idx"() <{dim = #cuda<dim z>}> : () -> index
// CHECK-GENERIC-NEXT:    %bx = "cuda.block_idx"() <{dim = #cuda<dim x>}> : () -> index
// CHECK-GENERIC-NEXT:    %by = "cuda.block_idx"() <{dim = #cuda<dim y>}> : () -> index
// CHECK-GENERIC-NEXT:    %bz = "cuda.block_idx"() <{dim = #cuda<dim z>}> : () -> index
// CHECK-GENERIC-NEXT:    %dx = "cuda.block_dim"() <{dim = #cuda<dim x>}> : () -> index
// CHECK-GENERIC-NEXT:    %dy = "cuda.block_dim"() <{dim = #cuda<dim y>}> : () -> index
// CHECK-GENERIC-NEXT:    %dz = "cuda.block_dim"() <{dim = #cuda<dim z>}> : () -> index
// CHECK-GENERIC-NEXT:    %gx = "cuda.grid_dim"() <{dim = #cuda<dim x>}> : () -> index
// CHECK-GENERIC-NEXT:    %gy = "cuda.grid_dim"() <{dim = #cuda<dim y>}> : () -> index
// CHECK-GENERIC-NEXT:    %gz = "cuda.grid_dim"() <{dim = #cuda<dim z>}> : () -> index
// CHECK-GENERIC-NEXT:    %c = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
// CHECK-GENERIC-NEXT:    "cuda.store"(%c, %out, %tx) : (f32, !cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) : () -> ()

// -----

// A warp butterfly with every shfl_xor offset; the largest block; the kernel's
// fused_ops and another attribute (fused_ops is a property in the generic
// form, the other an attribute; the custom form prints both, the attribute
// first).
cuda.kernel @warp_sum(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 1024 attributes {note = "butterfly", fused_ops = ["reduce_sum", "exp"]} {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
  %s16 = cuda.shfl_xor %v, 16 : f32
  %a16 = arith.addf %v, %s16 : f32
  %s8 = cuda.shfl_xor %a16, 8 : f32
  %a8 = arith.addf %a16, %s8 : f32
  %s4 = cuda.shfl_xor %a8, 4 : f32
  %a4 = arith.addf %a8, %s4 : f32
  %s2 = cuda.shfl_xor %a4, 2 : f32
  %a2 = arith.addf %a4, %s2 : f32
  %s1 = cuda.shfl_xor %a2, 1 : f32
  %a1 = arith.addf %a2, %s1 : f32
  %e = math.exp %a1 : f32
  cuda.store %e, %y[%i] : f32, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @warp_sum(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 1024 attributes {note = "butterfly", fused_ops = ["reduce_sum", "exp"]} {
// CHECK-NEXT:    %i = cuda.thread_idx x
// CHECK-NEXT:    %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %s16 = cuda.shfl_xor %v, 16 : f32
// CHECK-NEXT:    %a16 = arith.addf %v, %s16 : f32
// CHECK-NEXT:    %s8 = cuda.shfl_xor %a16, 8 : f32
// CHECK-NEXT:    %a8 = arith.addf %a16, %s8 : f32
// CHECK-NEXT:    %s4 = cuda.shfl_xor %a8, 4 : f32
// CHECK-NEXT:    %a4 = arith.addf %a8, %s4 : f32
// CHECK-NEXT:    %s2 = cuda.shfl_xor %a4, 2 : f32
// CHECK-NEXT:    %a2 = arith.addf %a4, %s2 : f32
// CHECK-NEXT:    %s1 = cuda.shfl_xor %a2, 1 : f32
// CHECK-NEXT:    %a1 = arith.addf %a2, %s1 : f32
// CHECK-NEXT:    %e = math.exp %a1 : f32
// CHECK-NEXT:    cuda.store %e, %y[%i] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "warp_sum", function_type = (!cuda.ptr<f32>, !cuda.ptr<f32>) -> (), block = #builtin.int<1024>, fused_ops = ["reduce_sum", "exp"]}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>):
// CHECK-GENERIC-NEXT:    %i = "cuda.thread_idx"() <{dim = #cuda<dim x>}> : () -> index
// CHECK-GENERIC-NEXT:    %v = "cuda.load"(%x, %i) : (!cuda.ptr<f32>, index) -> f32
// CHECK-GENERIC-NEXT:    %s16 = "cuda.shfl_xor"(%v) <{offset = 16 : i64}> : (f32) -> f32
// CHECK-GENERIC-NEXT:    %a16 = "arith.addf"(%v, %s16) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:    %s8 = "cuda.shfl_xor"(%a16) <{offset = 8 : i64}> : (f32) -> f32
// CHECK-GENERIC-NEXT:    %a8 = "arith.addf"(%a16, %s8) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:    %s4 = "cuda.shfl_xor"(%a8) <{offset = 4 : i64}> : (f32) -> f32
// CHECK-GENERIC-NEXT:    %a4 = "arith.addf"(%a8, %s4) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:    %s2 = "cuda.shfl_xor"(%a4) <{offset = 2 : i64}> : (f32) -> f32
// CHECK-GENERIC-NEXT:    %a2 = "arith.addf"(%a4, %s2) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:    %s1 = "cuda.shfl_xor"(%a2) <{offset = 1 : i64}> : (f32) -> f32
// CHECK-GENERIC-NEXT:    %a1 = "arith.addf"(%a2, %s1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// CHECK-GENERIC-NEXT:    %e = "math.exp"(%a1) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
// CHECK-GENERIC-NEXT:    "cuda.store"(%e, %y, %i) : (f32, !cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) {note = "butterfly"} : () -> ()

// -----

// A kernel body as the lowering writes them: index arithmetic, a grid-stride
// scf.for, an scf.for carrying two f32 values (iter_args), an scf.if with an
// else branch, f16 converted to f32 and back, math ops, a select.
cuda.kernel @control_flow(%x: !cuda.ptr<f16>, %w: !cuda.ptr<bf16>, %y: !cuda.ptr<f16>, %s: !cuda.ptr<f32>) block 256 {
  %c0 = arith.constant 0 : index
  %n = arith.constant 4096 : index
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %tid = cuda.thread_idx x
  %bid = cuda.block_idx x
  %bdim = cuda.block_dim x
  %gdim = cuda.grid_dim x
  %base = arith.muli %bid, %bdim : index
  %start = arith.addi %base, %tid : index
  %step = arith.muli %bdim, %gdim : index
  scf.for %i = %start to %n step %step {
    %h = cuda.load %x[%i] : !cuda.ptr<f16> -> f16
    %hf = arith.extf %h : f16 to f32
    %b = cuda.load %w[%i] : !cuda.ptr<bf16> -> bf16
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %hf, %bf : f32
    %t = math.tanh %p : f32
    %r = math.rsqrt %t : f32
    %o = arith.truncf %r : f32 to f16
    cuda.store %o, %y[%i] : f16, !cuda.ptr<f16>
  }
  %sum, %max = scf.for %j = %tid to %n step %bdim iter_args(%acc = %zero, %m = %ninf) -> (f32, f32) {
    %h = cuda.load %x[%j] : !cuda.ptr<f16> -> f16
    %hf = arith.extf %h : f16 to f32
    %acc1 = arith.addf %acc, %hf : f32
    %m1 = arith.maximumf %m, %hf : f32
    scf.yield %acc1, %m1 : f32, f32
  }
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {
    cuda.store %sum, %s[%bid] : f32, !cuda.ptr<f32>
  } else {
    %pos = arith.cmpf ogt, %max, %zero : f32
    %v = arith.select %pos, %max, %zero : f32
    %l = math.log %v : f32
    cuda.store %l, %s[%tid] : f32, !cuda.ptr<f32>
  }
  cuda.return
}

// CHECK-LABEL: cuda.kernel @control_flow(%x: !cuda.ptr<f16>, %w: !cuda.ptr<bf16>, %y: !cuda.ptr<f16>, %s: !cuda.ptr<f32>) block 256 {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %n = arith.constant 4096 : index
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %ninf = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %tid = cuda.thread_idx x
// CHECK-NEXT:    %bid = cuda.block_idx x
// CHECK-NEXT:    %bdim = cuda.block_dim x
// CHECK-NEXT:    %gdim = cuda.grid_dim x
// CHECK-NEXT:    %base = arith.muli %bid, %bdim : index
// CHECK-NEXT:    %start = arith.addi %base, %tid : index
// CHECK-NEXT:    %step = arith.muli %bdim, %gdim : index
// CHECK-NEXT:    scf.for %i = %start to %n step %step {
// CHECK-NEXT:      %h = cuda.load %x[%i] : !cuda.ptr<f16> -> f16
// CHECK-NEXT:      %hf = arith.extf %h : f16 to f32
// CHECK-NEXT:      %b = cuda.load %w[%i] : !cuda.ptr<bf16> -> bf16
// CHECK-NEXT:      %bf = arith.extf %b : bf16 to f32
// CHECK-NEXT:      %p = arith.mulf %hf, %bf : f32
// CHECK-NEXT:      %t = math.tanh %p : f32
// CHECK-NEXT:      %r = math.rsqrt %t : f32
// CHECK-NEXT:      %o = arith.truncf %r : f32 to f16
// CHECK-NEXT:      cuda.store %o, %y[%i] : f16, !cuda.ptr<f16>
// CHECK-NEXT:    }
// CHECK-NEXT:    %sum, %max = scf.for %j = %tid to %n step %bdim iter_args(%acc = %zero, %m = %ninf) -> (f32, f32) {
// CHECK-NEXT:      %h_1 = cuda.load %x[%j] : !cuda.ptr<f16> -> f16
// CHECK-NEXT:      %hf_1 = arith.extf %h_1 : f16 to f32
// CHECK-NEXT:      %acc1 = arith.addf %acc, %hf_1 : f32
// CHECK-NEXT:      %m1 = arith.maximumf %m, %hf_1 : f32
// CHECK-NEXT:      scf.yield %acc1, %m1 : f32, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %first = arith.cmpi eq, %tid, %c0 : index
// CHECK-NEXT:    scf.if %first {
// CHECK-NEXT:      cuda.store %sum, %s[%bid] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %pos = arith.cmpf ogt, %max, %zero : f32
// CHECK-NEXT:      %v = arith.select %pos, %max, %zero : f32
// CHECK-NEXT:      %l = math.log %v : f32
// CHECK-NEXT:      cuda.store %l, %s[%tid] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "control_flow", function_type = (!cuda.ptr<f16>, !cuda.ptr<bf16>, !cuda.ptr<f16>, !cuda.ptr<f32>) -> (), block = #builtin.int<256>}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%x: !cuda.ptr<f16>, %w: !cuda.ptr<bf16>, %y: !cuda.ptr<f16>, %s: !cuda.ptr<f32>):
// CHECK-GENERIC:         "scf.for"(%start, %n, %step) ({
// CHECK-GENERIC-NEXT:    ^bb0(%i: index):
// CHECK-GENERIC-NEXT:      %h = "cuda.load"(%x, %i) : (!cuda.ptr<f16>, index) -> f16
// CHECK-GENERIC-NEXT:      %hf = "arith.extf"(%h) : (f16) -> f32
// CHECK-GENERIC:           "cuda.store"(%o, %y, %i) : (f16, !cuda.ptr<f16>, index) -> ()
// CHECK-GENERIC-NEXT:      "scf.yield"() : () -> ()
// CHECK-GENERIC-NEXT:    }) : (index, index, index) -> ()
// CHECK-GENERIC-NEXT:    %sum, %max = "scf.for"(%tid, %n, %bdim, %zero, %ninf) ({
// CHECK-GENERIC-NEXT:    ^bb0(%j: index, %acc: f32, %m: f32):
// CHECK-GENERIC:           "scf.yield"(%acc1, %m1) : (f32, f32) -> ()
// CHECK-GENERIC-NEXT:    }) : (index, index, index, f32, f32) -> (f32, f32)
// CHECK-GENERIC:         "scf.if"(%first) ({
// CHECK-GENERIC-NEXT:      "cuda.store"(%sum, %s, %bid) : (f32, !cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC-NEXT:      "scf.yield"() : () -> ()
// CHECK-GENERIC-NEXT:    }, {
// CHECK-GENERIC:           "cuda.store"(%l, %s, %tid) : (f32, !cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC-NEXT:      "scf.yield"() : () -> ()
// CHECK-GENERIC-NEXT:    }) : (i1) -> ()
// CHECK-GENERIC-NEXT:    "cuda.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) : () -> ()

// -----

// Vector accesses: four f32 and eight f16 elements (16 bytes) loaded and
// stored at once, two bf16 (4 bytes); and a launch of the vectorized kernel
// that needs its first and last arguments aligned, with the kernel to
// launch instead when they are not.
cuda.kernel @vectors(%x: !cuda.ptr<f32>, %h: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>) block 64 {
  %i = cuda.thread_idx x
  %x0, %x1, %x2, %x3 = cuda.load %x[%i] : !cuda.ptr<f32> -> f32, f32, f32, f32
  cuda.store %x3, %x2, %x1, %x0, %x[%i] : f32, f32, f32, f32, !cuda.ptr<f32>
  %h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7 = cuda.load %h[%i] : !cuda.ptr<f16> -> f16, f16, f16, f16, f16, f16, f16, f16
  cuda.store %h7, %h6, %h5, %h4, %h3, %h2, %h1, %h0, %h[%i] : f16, f16, f16, f16, f16, f16, f16, f16, !cuda.ptr<f16>
  %b0, %b1 = cuda.load %b[%i] : !cuda.ptr<bf16> -> bf16, bf16
  cuda.store %b1, %b0, %b[%i] : bf16, bf16, !cuda.ptr<bf16>
  cuda.return
}
cuda.kernel @vectors_scalar(%x: !cuda.ptr<f32>, %h: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>) block 64 {
  cuda.return
}
cuda.host_func @vector_graph(%x: !cuda.ptr<f32>, %h: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>) outputs 1 {
  cuda.launch @vectors grid [4, 1, 1] block [64, 1, 1] (%x, %h, %b) aligned [0, 2] else @vectors_scalar : !cuda.ptr<f32>, !cuda.ptr<f16>, !cuda.ptr<bf16>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @vectors(%x: !cuda.ptr<f32>, %h: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>) block 64 {
// CHECK-NEXT:    %i = cuda.thread_idx x
// CHECK-NEXT:    %x0, %x1, %x2, %x3 = cuda.load %x[%i] : !cuda.ptr<f32> -> f32, f32, f32, f32
// CHECK-NEXT:    cuda.store %x3, %x2, %x1, %x0, %x[%i] : f32, f32, f32, f32, !cuda.ptr<f32>
// CHECK-NEXT:    %h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7 = cuda.load %h[%i] : !cuda.ptr<f16> -> f16, f16, f16, f16, f16, f16, f16, f16
// CHECK-NEXT:    cuda.store %h7, %h6, %h5, %h4, %h3, %h2, %h1, %h0, %h[%i] : f16, f16, f16, f16, f16, f16, f16, f16, !cuda.ptr<f16>
// CHECK-NEXT:    %b0, %b1 = cuda.load %b[%i] : !cuda.ptr<bf16> -> bf16, bf16
// CHECK-NEXT:    cuda.store %b1, %b0, %b[%i] : bf16, bf16, !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK:         cuda.launch @vectors grid [4, 1, 1] block [64, 1, 1](%x, %h, %b) aligned [0, 2] else @vectors_scalar : !cuda.ptr<f32>, !cuda.ptr<f16>, !cuda.ptr<bf16>

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "vectors", function_type = (!cuda.ptr<f32>, !cuda.ptr<f16>, !cuda.ptr<bf16>) -> (), block = #builtin.int<64>}> ({
// CHECK-GENERIC:         %x0, %x1, %x2, %x3 = "cuda.load"(%x, %i) : (!cuda.ptr<f32>, index) -> (f32, f32, f32, f32)
// CHECK-GENERIC-NEXT:    "cuda.store"(%x3, %x2, %x1, %x0, %x, %i) : (f32, f32, f32, f32, !cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC:         "cuda.launch"(%x, %h, %b) <{callee = @vectors, grid = array<i64: 4, 1, 1>, block = array<i64: 64, 1, 1>, aligned = array<i64: 0, 2>, fallback = @vectors_scalar}> : (!cuda.ptr<f32>, !cuda.ptr<f16>, !cuda.ptr<bf16>) -> ()

// -----

// A launcher over a named dimension T: its size after the pointers (`dims`),
// shapes by name, a kernel taking it as an `index` parameter, a buffer and a
// copy sized by it, a grid computed from it (`grid_of`, `scale`).
cuda.kernel @rows(%x: !cuda.ptr<f32>, %t: !cuda.ptr<f32>, %T: index) block 64 {
  cuda.return
}
cuda.host_func @sized(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) outputs 1 dims ["T"] shapes [[T, 8], [T, 8]] {
  %t = cuda.alloc 8 x %T : !cuda.ptr<f32>
  cuda.launch @rows grid [65535, 1, 1] block [64, 1, 1] (%x, %t, %T) grid_of [2] scale [8, 64] : !cuda.ptr<f32>, !cuda.ptr<f32>, index
  cuda.copy %y, %t, 8 x %T : !cuda.ptr<f32>
  cuda.free %t : !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @rows(%x: !cuda.ptr<f32>, %t: !cuda.ptr<f32>, %T: index) block 64 {
// CHECK:       cuda.host_func @sized(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) outputs 1 dims ["T"] shapes {{\[\[}}T, 8], [T, 8]] {
// CHECK-NEXT:    %t = cuda.alloc 8 x %T : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @rows grid [65535, 1, 1] block [64, 1, 1](%x, %t, %T) grid_of [2] scale [8, 64] : !cuda.ptr<f32>, !cuda.ptr<f32>, index
// CHECK-NEXT:    cuda.copy %y, %t, 8 x %T : !cuda.ptr<f32>

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "rows", function_type = (!cuda.ptr<f32>, !cuda.ptr<f32>, index) -> (), block = #builtin.int<64>}> ({
// CHECK-GENERIC:       "cuda.host_func"() <{sym_name = "sized", function_type = (!cuda.ptr<f32>, !cuda.ptr<f32>, index) -> (), outputs = #builtin.int<1>, dims = ["T"], shapes = [array<i64: -1, 8>, array<i64: -1, 8>]}> ({
// CHECK-GENERIC:         %t = "cuda.alloc"(%T) <{size = 8 : i64}> : (index) -> !cuda.ptr<f32>
// CHECK-GENERIC-NEXT:    "cuda.launch"(%x, %t, %T) <{callee = @rows, grid = array<i64: 65535, 1, 1>, block = array<i64: 64, 1, 1>, grid_of = array<i64: 2>, grid_scale = array<i64: 8, 64>}> : (!cuda.ptr<f32>, !cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.copy"(%y, %t, %T) <{size = 8 : i64}> : (!cuda.ptr<f32>, !cuda.ptr<f32>, index) -> ()

// Variants of a kernel over T, each launched at its sizes (`when`), the
// second's grid along y computed (`scale [scale, divisor, times, axis]`)
// and its `else` kernel's from the same size by a scale of its own
// (`else_scale`).
cuda.kernel @small(%x: !cuda.ptr<f32>, %T: index) block 64 {
  cuda.return
}
cuda.kernel @large(%x: !cuda.ptr<f32>, %T: index) block 128 {
  cuda.return
}
cuda.kernel @large_simt(%x: !cuda.ptr<f32>, %T: index) block 256 {
  cuda.return
}
cuda.host_func @classes(%x: !cuda.ptr<f32>, %a: !cuda.ptr<bf16>, %T: index) outputs 1 dims ["T"] shapes [[T, 4096], [T, 8]] {
  %map = cuda.make_tensor_map %a [1, 4096] x %T box [128, 64] : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
  cuda.launch @small grid [4, 1, 1] block [64, 1, 1] (%x, %T) when [1, 1, 8] : !cuda.ptr<f32>, index
  cuda.launch @large grid [4, 65535, 1] block [128, 1, 1] (%x, %T) when [1, 9, 0] grid_of [1] scale [1, 64, 1, 1] aligned [0] else @large_simt grid [2, 65535, 1] block [256, 1, 1] else_scale [1, 32, 1, 1] : !cuda.ptr<f32>, index
  cuda.return
}

// CHECK-LABEL: cuda.host_func @classes(%x: !cuda.ptr<f32>, %a: !cuda.ptr<bf16>, %T: index) outputs 1 dims ["T"] shapes {{\[\[}}T, 4096], [T, 8]] {
// CHECK-NEXT:    %map = cuda.make_tensor_map %a [1, 4096] x %T box [128, 64] : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
// CHECK-NEXT:    cuda.launch @small grid [4, 1, 1] block [64, 1, 1](%x, %T) when [1, 1, 8] : !cuda.ptr<f32>, index
// CHECK-NEXT:    cuda.launch @large grid [4, 65535, 1] block [128, 1, 1](%x, %T) when [1, 9, 0] grid_of [1] scale [1, 64, 1, 1] aligned [0] else @large_simt grid [2, 65535, 1] block [256, 1, 1] else_scale [1, 32, 1, 1] : !cuda.ptr<f32>, index
// CHECK-GENERIC-LABEL: "cuda.host_func"() <{sym_name = "classes"
// CHECK-GENERIC:         %map = "cuda.make_tensor_map"(%a, %T) <{shape = array<i64: 1, 4096>, box = array<i64: 128, 64>}> : (!cuda.ptr<bf16>, index) -> !cuda.tensor_map<bf16>
// CHECK-GENERIC:         "cuda.launch"(%x, %T) <{callee = @small, grid = array<i64: 4, 1, 1>, block = array<i64: 64, 1, 1>, when = array<i64: 1, 1, 8>}> : (!cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.launch"(%x, %T) <{callee = @large, grid = array<i64: 4, 65535, 1>, block = array<i64: 128, 1, 1>, when = array<i64: 1, 9, 0>, grid_of = array<i64: 1>, grid_scale = array<i64: 1, 64, 1, 1>, aligned = array<i64: 0>, fallback = @large_simt, fallback_grid = array<i64: 2, 65535, 1>, fallback_block = array<i64: 256, 1, 1>, fallback_scale = array<i64: 1, 32, 1, 1>}> : (!cuda.ptr<f32>, index) -> ()

// A launcher: two inputs and two outputs (`outputs 2`: the trailing two
// parameters), a buffer between two launches (alloc, free), launches with
// grids and blocks in three dimensions; a kernel of each pointer type.
cuda.kernel @produce(%a: !cuda.ptr<f16>, %t: !cuda.ptr<f32>) block 128 {
  cuda.return
}
cuda.kernel @consume(%t: !cuda.ptr<f32>, %b: !cuda.ptr<bf16>, %y: !cuda.ptr<f32>, %z: !cuda.ptr<bf16>) block 64 {
  cuda.return
}
cuda.host_func @graph(%a: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>, %y: !cuda.ptr<f32>, %z: !cuda.ptr<bf16>) outputs 2 attributes {note = "launcher"} {
  %t = cuda.alloc 4096 : !cuda.ptr<f32>
  cuda.launch @produce grid [32, 1, 1] block [128, 1, 1] (%a, %t) : !cuda.ptr<f16>, !cuda.ptr<f32>
  cuda.launch @consume grid [2, 3, 4] block [16, 2, 2] (%t, %b, %y, %z) : !cuda.ptr<f32>, !cuda.ptr<bf16>, !cuda.ptr<f32>, !cuda.ptr<bf16>
  cuda.free %t : !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @produce(%a: !cuda.ptr<f16>, %t: !cuda.ptr<f32>) block 128 {
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.kernel @consume(%t: !cuda.ptr<f32>, %b: !cuda.ptr<bf16>, %y: !cuda.ptr<f32>, %z: !cuda.ptr<bf16>) block 64 {
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @graph(%a: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>, %y: !cuda.ptr<f32>, %z: !cuda.ptr<bf16>) outputs 2 attributes {note = "launcher"} {
// CHECK-NEXT:    %t = cuda.alloc 4096 : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @produce grid [32, 1, 1] block [128, 1, 1](%a, %t) : !cuda.ptr<f16>, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @consume grid [2, 3, 4] block [16, 2, 2](%t, %b, %y, %z) : !cuda.ptr<f32>, !cuda.ptr<bf16>, !cuda.ptr<f32>, !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.free %t : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "produce", function_type = (!cuda.ptr<f16>, !cuda.ptr<f32>) -> (), block = #builtin.int<128>}> ({
// CHECK-GENERIC:       "cuda.kernel"() <{sym_name = "consume", function_type = (!cuda.ptr<f32>, !cuda.ptr<bf16>, !cuda.ptr<f32>, !cuda.ptr<bf16>) -> (), block = #builtin.int<64>}> ({
// CHECK-GENERIC:       "cuda.host_func"() <{sym_name = "graph", function_type = (!cuda.ptr<f16>, !cuda.ptr<bf16>, !cuda.ptr<f32>, !cuda.ptr<bf16>) -> (), outputs = #builtin.int<2>}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%a: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>, %y: !cuda.ptr<f32>, %z: !cuda.ptr<bf16>):
// CHECK-GENERIC-NEXT:    %t = "cuda.alloc"() <{size = 4096 : i64}> : () -> !cuda.ptr<f32>
// CHECK-GENERIC-NEXT:    "cuda.launch"(%a, %t) <{callee = @produce, grid = array<i64: 32, 1, 1>, block = array<i64: 128, 1, 1>}> : (!cuda.ptr<f16>, !cuda.ptr<f32>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.launch"(%t, %b, %y, %z) <{callee = @consume, grid = array<i64: 2, 3, 4>, block = array<i64: 16, 2, 2>}> : (!cuda.ptr<f32>, !cuda.ptr<bf16>, !cuda.ptr<f32>, !cuda.ptr<bf16>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.free"(%t) : (!cuda.ptr<f32>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) {note = "launcher"} : () -> ()

// -----

// Every parameter an output (`outputs` equal to the parameter count), with
// their tensors' shapes (one a scalar's), an f16 and a bf16 buffer, a launch
// with no arguments, copies between buffers (f16, bf16).
cuda.kernel @nothing() block 32 {
  cuda.return
}
cuda.host_func @all_outputs(%y: !cuda.ptr<f16>, %z: !cuda.ptr<bf16>) outputs 2 shapes [[], [7]] {
  %h = cuda.alloc 1 : !cuda.ptr<f16>
  %b = cuda.alloc 7 : !cuda.ptr<bf16>
  cuda.launch @nothing grid [1, 1, 1] block [32, 1, 1] () :
  cuda.copy %y, %h, 1 : !cuda.ptr<f16>
  cuda.copy %z, %b, 7 : !cuda.ptr<bf16>
  cuda.free %b : !cuda.ptr<bf16>
  cuda.free %h : !cuda.ptr<f16>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @nothing() block 32 {
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @all_outputs(%y: !cuda.ptr<f16>, %z: !cuda.ptr<bf16>) outputs 2 shapes [[], [7]] {
// CHECK-NEXT:    %h = cuda.alloc 1 : !cuda.ptr<f16>
// CHECK-NEXT:    %b = cuda.alloc 7 : !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.launch @nothing grid [1, 1, 1] block [32, 1, 1]() :{{ ?$}}
// CHECK-NEXT:    cuda.copy %y, %h, 1 : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.copy %z, %b, 7 : !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.free %b : !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.free %h : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "cuda.host_func"() <{sym_name = "all_outputs", function_type = (!cuda.ptr<f16>, !cuda.ptr<bf16>) -> (), outputs = #builtin.int<2>, shapes = [array<i64>, array<i64: 7>]}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%y: !cuda.ptr<f16>, %z: !cuda.ptr<bf16>):
// CHECK-GENERIC-NEXT:    %h = "cuda.alloc"() <{size = 1 : i64}> : () -> !cuda.ptr<f16>
// CHECK-GENERIC-NEXT:    %b = "cuda.alloc"() <{size = 7 : i64}> : () -> !cuda.ptr<bf16>
// CHECK-GENERIC-NEXT:    "cuda.launch"() <{callee = @nothing, grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>}> : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.copy"(%y, %h) <{size = 1 : i64}> : (!cuda.ptr<f16>, !cuda.ptr<f16>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.copy"(%z, %b) <{size = 7 : i64}> : (!cuda.ptr<bf16>, !cuda.ptr<bf16>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.free"(%b) : (!cuda.ptr<bf16>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.free"(%h) : (!cuda.ptr<f16>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) : () -> ()

// -----

// Blocks of a row that wait for each other: a kernel (16 of its blocks fit an
// SM: min_blocks) with i32 counters and a
// group barrier, a coherent load of another block's partial; its launcher
// zeroes the counters and launches it cooperatively, in groups of 2 blocks.
cuda.kernel @parts(%x: !cuda.ptr<f32>, %counters: !cuda.ptr<i32>, %partials: !cuda.ptr<f32>) block 64 min_blocks 16 {
  %b = cuda.block_idx x
  %t = cuda.thread_idx x
  %v = cuda.load %x[%t] : !cuda.ptr<f32> -> f32
  cuda.store %v, %partials[%b] : f32, !cuda.ptr<f32>
  cuda.group_barrier %counters[%b], %t : !cuda.ptr<i32>
  %p = cuda.load coherent %partials[%b] : !cuda.ptr<f32> -> f32
  %last = cuda.last_arrival %counters[%b], %t : !cuda.ptr<i32>
  %first_warps = cuda.last_arrival %counters[%b], %t among 32 : !cuda.ptr<i32>
  cuda.return
}
cuda.host_func @grouped(%x: !cuda.ptr<f32>) outputs 1 {
  %c = cuda.alloc 4 : !cuda.ptr<i32>
  %p = cuda.alloc 16 : !cuda.ptr<f32>
  %r = cuda.alloc 4 : !cuda.ptr<i32>
  cuda.zero %c, 4 : !cuda.ptr<i32>
  cuda.zero %r, 4 restored : !cuda.ptr<i32>
  cuda.launch @parts grid [8, 1, 1] block [64, 1, 1] (%x, %c, %p) cooperative [2] : !cuda.ptr<f32>, !cuda.ptr<i32>, !cuda.ptr<f32>
  cuda.free %p : !cuda.ptr<f32>
  cuda.free %c : !cuda.ptr<i32>
  cuda.free %r : !cuda.ptr<i32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @parts(%x: !cuda.ptr<f32>, %counters: !cuda.ptr<i32>, %partials: !cuda.ptr<f32>) block 64 min_blocks 16 {
// CHECK:         cuda.group_barrier %counters[%b], %t : !cuda.ptr<i32>
// CHECK-NEXT:    %p = cuda.load coherent %partials[%b] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    %last = cuda.last_arrival %counters[%b], %t : !cuda.ptr<i32>
// CHECK-NEXT:    %first_warps = cuda.last_arrival %counters[%b], %t among 32 : !cuda.ptr<i32>
// CHECK:       cuda.host_func @grouped(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK:         cuda.zero %c, 4 : !cuda.ptr<i32>
// CHECK-NEXT:    cuda.zero %r, 4 restored : !cuda.ptr<i32>
// CHECK-NEXT:    cuda.launch @parts grid [8, 1, 1] block [64, 1, 1](%x, %c, %p) cooperative [2] : !cuda.ptr<f32>, !cuda.ptr<i32>, !cuda.ptr<f32>

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "parts", function_type = (!cuda.ptr<f32>, !cuda.ptr<i32>, !cuda.ptr<f32>) -> (), block = #builtin.int<64>, min_blocks = #builtin.int<16>}>
// CHECK-GENERIC:         "cuda.group_barrier"(%counters, %b, %t) : (!cuda.ptr<i32>, index, index) -> ()
// CHECK-GENERIC-NEXT:    %p = "cuda.load"(%partials, %b) <{coherent}> : (!cuda.ptr<f32>, index) -> f32
// CHECK-GENERIC-NEXT:    %last = "cuda.last_arrival"(%counters, %b, %t) : (!cuda.ptr<i32>, index, index) -> i1
// CHECK-GENERIC-NEXT:    %first_warps = "cuda.last_arrival"(%counters, %b, %t) <{threads = 32 : i64}> : (!cuda.ptr<i32>, index, index) -> i1
// CHECK-GENERIC:         "cuda.zero"(%c) <{size = 4 : i64}> : (!cuda.ptr<i32>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.zero"(%r) <{size = 4 : i64, restored}> : (!cuda.ptr<i32>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.launch"(%x, %c, %p) <{callee = @parts, grid = array<i64: 8, 1, 1>, block = array<i64: 64, 1, 1>, cooperative = array<i64: 2>}> : (!cuda.ptr<f32>, !cuda.ptr<i32>, !cuda.ptr<f32>) -> ()

// -----

// Asynchronous copies from global to shared memory, 16 bytes each, of every
// element type: one always copied (a true constant), one zero-filled past
// the end of the tile (a computed flag); each closed in its own group, then
// waits for all but the newest 7 and all but the newest 1 groups, and for
// all of them.
cuda.kernel @async_copies(%h: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>, %x: !cuda.ptr<f32>) block 64 {
  %c8 = arith.constant 8 : index
  %c100 = arith.constant 100 : index
  %true = arith.constant true
  %t = cuda.thread_idx x
  %i = arith.muli %t, %c8 : index
  %inside = arith.cmpi slt, %i, %c100 : index
  %sh = cuda.shared_alloc 512 : !cuda.ptr<f16, shared>
  %sb = cuda.shared_alloc 512 : !cuda.ptr<bf16, shared>
  %sx = cuda.shared_alloc 256 : !cuda.ptr<f32, shared>
  cuda.cp_async %sh[%i], %h[%i], %true : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
  cuda.cp_async_commit
  cuda.cp_async %sb[%i], %b[%i], %inside : !cuda.ptr<bf16, shared>, !cuda.ptr<bf16>
  cuda.cp_async_commit
  cuda.cp_async %sx[%t], %x[%t], %inside : !cuda.ptr<f32, shared>, !cuda.ptr<f32>
  cuda.cp_async_commit
  cuda.cp_async_wait 7
  cuda.cp_async_wait 1
  cuda.cp_async_wait 0
  cuda.sync_threads
  cuda.return
}

// CHECK-LABEL: cuda.kernel @async_copies(%h: !cuda.ptr<f16>, %b: !cuda.ptr<bf16>, %x: !cuda.ptr<f32>) block 64 {
// CHECK:         %inside = arith.cmpi slt, %i, %c100 : index
// CHECK-NEXT:    %sh = cuda.shared_alloc 512 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %sb = cuda.shared_alloc 512 : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    %sx = cuda.shared_alloc 256 : !cuda.ptr<f32, shared>
// CHECK-NEXT:    cuda.cp_async %sh[%i], %h[%i], %true : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.cp_async_commit
// CHECK-NEXT:    cuda.cp_async %sb[%i], %b[%i], %inside : !cuda.ptr<bf16, shared>, !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.cp_async_commit
// CHECK-NEXT:    cuda.cp_async %sx[%t], %x[%t], %inside : !cuda.ptr<f32, shared>, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.cp_async_commit
// CHECK-NEXT:    cuda.cp_async_wait 7
// CHECK-NEXT:    cuda.cp_async_wait 1
// CHECK-NEXT:    cuda.cp_async_wait 0
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "async_copies", function_type = (!cuda.ptr<f16>, !cuda.ptr<bf16>, !cuda.ptr<f32>) -> (), block = #builtin.int<64>}> ({
// CHECK-GENERIC:         "cuda.cp_async"(%sh, %i, %h, %i, %true) : (!cuda.ptr<f16, shared>, index, !cuda.ptr<f16>, index, i1) -> ()
// CHECK-GENERIC-NEXT:    "cuda.cp_async_commit"() : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.cp_async"(%sb, %i, %b, %i, %inside) : (!cuda.ptr<bf16, shared>, index, !cuda.ptr<bf16>, index, i1) -> ()
// CHECK-GENERIC-NEXT:    "cuda.cp_async_commit"() : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.cp_async"(%sx, %t, %x, %t, %inside) : (!cuda.ptr<f32, shared>, index, !cuda.ptr<f32>, index, i1) -> ()
// CHECK-GENERIC-NEXT:    "cuda.cp_async_commit"() : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.cp_async_wait"() <{pending = 7 : i64}> : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.cp_async_wait"() <{pending = 1 : i64}> : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.cp_async_wait"() <{pending = 0 : i64}> : () -> ()

// -----

// Fragments from shared memory and tensor-core multiply-accumulates: ldmatrix
// of f16 and bf16 tiles, each as stored and transposed (`trans`, a property
// in the generic form); an f16 mma from zero accumulators, a bf16 mma
// accumulating onto its results (the fragments are i32, the accumulators
// f32; the operand segments are a property in the generic form).
cuda.kernel @fragments(%y: !cuda.ptr<f32>) block 32 {
  %zero = arith.constant 0.000000e+00 : f32
  %lane = cuda.thread_idx x
  %sh = cuda.shared_alloc 256 : !cuda.ptr<f16, shared>
  %sb = cuda.shared_alloc 256 : !cuda.ptr<bf16, shared>
  %a0, %a1, %a2, %a3 = cuda.ldmatrix %sh[%lane] : !cuda.ptr<f16, shared>
  %b0, %b1, %b2, %b3 = cuda.ldmatrix trans %sh[%lane] : !cuda.ptr<f16, shared>
  %d0, %d1, %d2, %d3 = cuda.mma f16 a [%a0, %a1, %a2, %a3] b [%b0, %b1] c [%zero, %zero, %zero, %zero]
  %e0, %e1, %e2, %e3 = cuda.ldmatrix %sb[%lane] : !cuda.ptr<bf16, shared>
  %f0, %f1, %f2, %f3 = cuda.ldmatrix trans %sb[%lane] : !cuda.ptr<bf16, shared>
  %g0, %g1, %g2, %g3 = cuda.mma bf16 a [%e0, %e1, %e2, %e3] b [%f2, %f3] c [%d0, %d1, %d2, %d3]
  cuda.store %g0, %g1, %g2, %g3, %y[%lane] : f32, f32, f32, f32, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @fragments(%y: !cuda.ptr<f32>) block 32 {
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %lane = cuda.thread_idx x
// CHECK-NEXT:    %sh = cuda.shared_alloc 256 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %sb = cuda.shared_alloc 256 : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    %a0, %a1, %a2, %a3 = cuda.ldmatrix %sh[%lane] : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %b0, %b1, %b2, %b3 = cuda.ldmatrix trans %sh[%lane] : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %d0, %d1, %d2, %d3 = cuda.mma f16 a[%a0, %a1, %a2, %a3] b[%b0, %b1] c[%zero, %zero, %zero, %zero]
// CHECK-NEXT:    %e0, %e1, %e2, %e3 = cuda.ldmatrix %sb[%lane] : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    %f0, %f1, %f2, %f3 = cuda.ldmatrix trans %sb[%lane] : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    %g0, %g1, %g2, %g3 = cuda.mma bf16 a[%e0, %e1, %e2, %e3] b[%f2, %f3] c[%d0, %d1, %d2, %d3]
// CHECK-NEXT:    cuda.store %g0, %g1, %g2, %g3, %y[%lane] : f32, f32, f32, f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// 3xTF32: ldmatrix of an f32 tile (untransposed), an f32 register split
// into big and small tf32 terms, and the m16n8k8 mma on tf32 fragments
// (`cuda.mma f32`).
cuda.kernel @tf32_fragments(%y: !cuda.ptr<f32>) block 32 {
  %zero = arith.constant 0.000000e+00 : f32
  %lane = cuda.thread_idx x
  %sf = cuda.shared_alloc 256 : !cuda.ptr<f32, shared>
  %a0, %a1, %a2, %a3 = cuda.ldmatrix %sf[%lane] : !cuda.ptr<f32, shared>
  %x = cuda.load %sf[%lane] : !cuda.ptr<f32, shared> -> f32
  %big, %small = cuda.split_tf32 %a0 : i32
  %xbig, %xsmall = cuda.split_tf32 %x : f32
  %d0, %d1, %d2, %d3 = cuda.mma f32 a [%big, %small, %a2, %a3] b [%xbig, %xsmall] c [%zero, %zero, %zero, %zero]
  cuda.store %d0, %d1, %d2, %d3, %y[%lane] : f32, f32, f32, f32, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @tf32_fragments(%y: !cuda.ptr<f32>) block 32 {
// CHECK:         %a0, %a1, %a2, %a3 = cuda.ldmatrix %sf[%lane] : !cuda.ptr<f32, shared>
// CHECK-NEXT:    %x = cuda.load %sf[%lane] : !cuda.ptr<f32, shared> -> f32
// CHECK-NEXT:    %big, %small = cuda.split_tf32 %a0 : i32
// CHECK-NEXT:    %xbig, %xsmall = cuda.split_tf32 %x : f32
// CHECK-NEXT:    %d0, %d1, %d2, %d3 = cuda.mma f32 a[%big, %small, %a2, %a3] b[%xbig, %xsmall] c[%zero, %zero, %zero, %zero]

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "fragments", function_type = (!cuda.ptr<f32>) -> (), block = #builtin.int<32>}> ({
// CHECK-GENERIC:         %a0, %a1, %a2, %a3 = "cuda.ldmatrix"(%sh, %lane) : (!cuda.ptr<f16, shared>, index) -> (i32, i32, i32, i32)
// CHECK-GENERIC-NEXT:    %b0, %b1, %b2, %b3 = "cuda.ldmatrix"(%sh, %lane) <{trans}> : (!cuda.ptr<f16, shared>, index) -> (i32, i32, i32, i32)
// CHECK-GENERIC-NEXT:    %d0, %d1, %d2, %d3 = "cuda.mma"(%a0, %a1, %a2, %a3, %b0, %b1, %zero, %zero, %zero, %zero) <{operand = f16, operandSegmentSizes = array<i32: 4, 2, 4>}> : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
// CHECK-GENERIC-NEXT:    %e0, %e1, %e2, %e3 = "cuda.ldmatrix"(%sb, %lane) : (!cuda.ptr<bf16, shared>, index) -> (i32, i32, i32, i32)
// CHECK-GENERIC-NEXT:    %f0, %f1, %f2, %f3 = "cuda.ldmatrix"(%sb, %lane) <{trans}> : (!cuda.ptr<bf16, shared>, index) -> (i32, i32, i32, i32)
// CHECK-GENERIC-NEXT:    %g0, %g1, %g2, %g3 = "cuda.mma"(%e0, %e1, %e2, %e3, %f2, %f3, %d0, %d1, %d2, %d3) <{operand = bf16, operandSegmentSizes = array<i32: 4, 2, 4>}> : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> (f32, f32, f32, f32)

// -----

// sm_90a's warpgroup tensor cores: descriptors of f16 and bf16 tiles in
// shared memory (`leading` and `stride` in bytes, properties in the generic
// form; the result is an i64), the fence that makes this thread's shared
// writes visible to the tensor cores, a barrier of 128 threads (the
// warpgroup) whose id is an index, the wgmma fence, an f16 wgmma of n 8
// (4 f32 accumulators a thread) from zero accumulators with B MN-major
// (trans_b), a bf16 one with both operands MN-major accumulating onto its
// results (`trans_a` and `trans_b` unit properties, `n` an i64 property),
// the commit of their group, then waits for all but 1 and for all groups
// (`pending` a property), each passing the accumulators through.
cuda.kernel @warpgroup(%y: !cuda.ptr<f32>) block 128 {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %c1 = arith.constant 1 : index
  %t = cuda.thread_idx x
  %sh = cuda.shared_alloc 8192 : !cuda.ptr<f16, shared>
  %sb = cuda.shared_alloc 8192 : !cuda.ptr<bf16, shared>
  %da = cuda.wgmma_descriptor %sh[%c0] leading 16 stride 1024 : !cuda.ptr<f16, shared>
  %db = cuda.wgmma_descriptor %sh[%c512] leading 8192 stride 1024 : !cuda.ptr<f16, shared>
  %ea = cuda.wgmma_descriptor %sb[%c0] leading 8192 stride 1024 : !cuda.ptr<bf16, shared>
  %eb = cuda.wgmma_descriptor %sb[%c512] leading 8192 stride 1024 : !cuda.ptr<bf16, shared>
  cuda.fence_proxy_async
  cuda.named_barrier %c1, 128
  cuda.sync_threads
  cuda.wgmma_fence
  %d0, %d1, %d2, %d3 = cuda.wgmma f16 n 8 trans_b %da, %db [%zero, %zero, %zero, %zero] : f32, f32, f32, f32
  %e0, %e1, %e2, %e3 = cuda.wgmma bf16 n 8 trans_a trans_b %ea, %eb [%d0, %d1, %d2, %d3] : f32, f32, f32, f32
  cuda.wgmma_commit
  %f0, %f1, %f2, %f3 = cuda.wgmma_wait 1 [%e0, %e1, %e2, %e3] : f32, f32, f32, f32
  %g0, %g1, %g2, %g3 = cuda.wgmma_wait 0 [%f0, %f1, %f2, %f3] : f32, f32, f32, f32
  cuda.store %g0, %g1, %g2, %g3, %y[%t] : f32, f32, f32, f32, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @warpgroup(%y: !cuda.ptr<f32>) block 128 {
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c512 = arith.constant 512 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %t = cuda.thread_idx x
// CHECK-NEXT:    %sh = cuda.shared_alloc 8192 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %sb = cuda.shared_alloc 8192 : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    %da = cuda.wgmma_descriptor %sh[%c0] leading 16 stride 1024 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %db = cuda.wgmma_descriptor %sh[%c512] leading 8192 stride 1024 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %ea = cuda.wgmma_descriptor %sb[%c0] leading 8192 stride 1024 : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    %eb = cuda.wgmma_descriptor %sb[%c512] leading 8192 stride 1024 : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    cuda.fence_proxy_async
// CHECK-NEXT:    cuda.named_barrier %c1, 128
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    cuda.wgmma_fence
// CHECK-NEXT:    %d0, %d1, %d2, %d3 = cuda.wgmma f16 n 8 trans_b %da, %db[%zero, %zero, %zero, %zero] : f32, f32, f32, f32
// CHECK-NEXT:    %e0, %e1, %e2, %e3 = cuda.wgmma bf16 n 8 trans_a trans_b %ea, %eb[%d0, %d1, %d2, %d3] : f32, f32, f32, f32
// CHECK-NEXT:    cuda.wgmma_commit
// CHECK-NEXT:    %f0, %f1, %f2, %f3 = cuda.wgmma_wait 1[%e0, %e1, %e2, %e3] : f32, f32, f32, f32
// CHECK-NEXT:    %g0, %g1, %g2, %g3 = cuda.wgmma_wait 0[%f0, %f1, %f2, %f3] : f32, f32, f32, f32
// CHECK-NEXT:    cuda.store %g0, %g1, %g2, %g3, %y[%t] : f32, f32, f32, f32, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "warpgroup", function_type = (!cuda.ptr<f32>) -> (), block = #builtin.int<128>}> ({
// CHECK-GENERIC:         %da = "cuda.wgmma_descriptor"(%sh, %c0) <{leading = 16 : i64, stride = 1024 : i64}> : (!cuda.ptr<f16, shared>, index) -> ui64
// CHECK-GENERIC-NEXT:    %db = "cuda.wgmma_descriptor"(%sh, %c512) <{leading = 8192 : i64, stride = 1024 : i64}> : (!cuda.ptr<f16, shared>, index) -> ui64
// CHECK-GENERIC-NEXT:    %ea = "cuda.wgmma_descriptor"(%sb, %c0) <{leading = 8192 : i64, stride = 1024 : i64}> : (!cuda.ptr<bf16, shared>, index) -> ui64
// CHECK-GENERIC-NEXT:    %eb = "cuda.wgmma_descriptor"(%sb, %c512) <{leading = 8192 : i64, stride = 1024 : i64}> : (!cuda.ptr<bf16, shared>, index) -> ui64
// CHECK-GENERIC-NEXT:    "cuda.fence_proxy_async"() : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.named_barrier"(%c1) <{threads = 128 : i64}> : (index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.sync_threads"() : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.wgmma_fence"() : () -> ()
// CHECK-GENERIC-NEXT:    %d0, %d1, %d2, %d3 = "cuda.wgmma"(%da, %db, %zero, %zero, %zero, %zero) <{operand = f16, n = 8 : i64, trans_b}> : (ui64, ui64, f32, f32, f32, f32) -> (f32, f32, f32, f32)
// CHECK-GENERIC-NEXT:    %e0, %e1, %e2, %e3 = "cuda.wgmma"(%ea, %eb, %d0, %d1, %d2, %d3) <{operand = bf16, n = 8 : i64, trans_a, trans_b}> : (ui64, ui64, f32, f32, f32, f32) -> (f32, f32, f32, f32)
// CHECK-GENERIC-NEXT:    "cuda.wgmma_commit"() : () -> ()
// CHECK-GENERIC-NEXT:    %f0, %f1, %f2, %f3 = "cuda.wgmma_wait"(%e0, %e1, %e2, %e3) <{pending = 1 : i64}> : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
// CHECK-GENERIC-NEXT:    %g0, %g1, %g2, %g3 = "cuda.wgmma_wait"(%f0, %f1, %f2, %f3) <{pending = 0 : i64}> : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
// CHECK-GENERIC-NEXT:    "cuda.store"(%g0, %g1, %g2, %g3, %y, %t) : (f32, f32, f32, f32, !cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) : () -> ()

// -----

// The first product of a sum without accumulators in (D = A B: `[]`, `n` a
// property, as many results as it says), and a product whose A comes from
// registers (cuda.wgmma_reg_a: four fragment registers a thread, packed from
// f32 values; B MN-major) accumulating onto it.
cuda.kernel @warpgroup_forms(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.000000e+00 : f32
  %t = cuda.thread_idx x
  %sh = cuda.shared_alloc 8192 : !cuda.ptr<f16, shared>
  %da = cuda.wgmma_descriptor %sh[%c0] leading 16 stride 1024 : !cuda.ptr<f16, shared>
  %db = cuda.wgmma_descriptor %sh[%c0] leading 8192 stride 1024 : !cuda.ptr<f16, shared>
  cuda.wgmma_fence
  %d0, %d1, %d2, %d3 = cuda.wgmma f16 n 8 %da, %da [] : f32, f32, f32, f32
  %p = cuda.pack f16 %one, %one
  %e0, %e1, %e2, %e3 = cuda.wgmma_reg_a f16 n 8 trans_b [%p, %p, %p, %p], %db [%d0, %d1, %d2, %d3] : f32, f32, f32, f32
  cuda.wgmma_commit
  %g0, %g1, %g2, %g3 = cuda.wgmma_wait 0 [%e0, %e1, %e2, %e3] : f32, f32, f32, f32
  cuda.store %g0, %g1, %g2, %g3, %y[%t] : f32, f32, f32, f32, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @warpgroup_forms(%y: !cuda.ptr<f32>) block 128 {
// CHECK:         cuda.wgmma_fence
// CHECK-NEXT:    %d0, %d1, %d2, %d3 = cuda.wgmma f16 n 8 %da, %da[] : f32, f32, f32, f32
// CHECK-NEXT:    %p = cuda.pack f16 %one, %one
// CHECK-NEXT:    %e0, %e1, %e2, %e3 = cuda.wgmma_reg_a f16 n 8 trans_b[%p, %p, %p, %p], %db[%d0, %d1, %d2, %d3] : f32, f32, f32, f32
// CHECK-NEXT:    cuda.wgmma_commit

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "warpgroup_forms", function_type = (!cuda.ptr<f32>) -> (), block = #builtin.int<128>}> ({
// CHECK-GENERIC:         %d0, %d1, %d2, %d3 = "cuda.wgmma"(%da, %da) <{operand = f16, n = 8 : i64}> : (ui64, ui64) -> (f32, f32, f32, f32)
// CHECK-GENERIC:         %e0, %e1, %e2, %e3 = "cuda.wgmma_reg_a"(%p, %p, %p, %p, %db, %d0, %d1, %d2, %d3) <{operand = f16, n = 8 : i64, trans_b, operandSegmentSizes = array<i32: 4, 1, 4>}> : (i32, i32, i32, i32, ui64, f32, f32, f32, f32) -> (f32, f32, f32, f32)

// -----

// A kernel with all the shared memory a block may have (227 KiB, beyond the
// 48 KiB a kernel may declare statically), and a launch that falls back to
// a kernel launched differently: its own grid and block after `else`, within
// its own launch bound (256 threads, where the first kernel's is 128).
cuda.kernel @mma_tiles(%a: !cuda.ptr<f16>, %y: !cuda.ptr<f32>) block 128 {
  %sa = cuda.shared_alloc 65536 : !cuda.ptr<f16, shared>
  %sc = cuda.shared_alloc 25344 : !cuda.ptr<f32, shared>
  cuda.return
}
cuda.kernel @simt_tiles(%a: !cuda.ptr<f16>, %y: !cuda.ptr<f32>) block 256 {
  cuda.return
}
cuda.host_func @tiled(%a: !cuda.ptr<f16>, %y: !cuda.ptr<f32>) outputs 1 {
  cuda.launch @mma_tiles grid [4, 2, 1] block [128, 1, 1] (%a, %y) aligned [0, 1] else @simt_tiles grid [8, 4, 1] block [16, 16, 1] : !cuda.ptr<f16>, !cuda.ptr<f32>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @mma_tiles(%a: !cuda.ptr<f16>, %y: !cuda.ptr<f32>) block 128 {
// CHECK-NEXT:    %sa = cuda.shared_alloc 65536 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %sc = cuda.shared_alloc 25344 : !cuda.ptr<f32, shared>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK:       cuda.host_func @tiled(%a: !cuda.ptr<f16>, %y: !cuda.ptr<f32>) outputs 1 {
// CHECK-NEXT:    cuda.launch @mma_tiles grid [4, 2, 1] block [128, 1, 1](%a, %y) aligned [0, 1] else @simt_tiles grid [8, 4, 1] block [16, 16, 1] : !cuda.ptr<f16>, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "cuda.host_func"() <{sym_name = "tiled", function_type = (!cuda.ptr<f16>, !cuda.ptr<f32>) -> (), outputs = #builtin.int<1>}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%a: !cuda.ptr<f16>, %y: !cuda.ptr<f32>):
// CHECK-GENERIC-NEXT:    "cuda.launch"(%a, %y) <{callee = @mma_tiles, grid = array<i64: 4, 2, 1>, block = array<i64: 128, 1, 1>, aligned = array<i64: 0, 1>, fallback = @simt_tiles, fallback_grid = array<i64: 8, 4, 1>, fallback_block = array<i64: 16, 16, 1>}> : (!cuda.ptr<f16>, !cuda.ptr<f32>) -> ()
// CHECK-GENERIC-NEXT:    "cuda.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) : () -> ()

// -----

// TMA and mbarriers: a kernel taking a tensor map by value; mbarriers in
// shared memory (i64), initialized and fenced; a producer's arrival that
// expects a box's bytes, the box loaded by TMA at (column, row); a wait
// for a phase's parity and a plain arrival; a warpgroup giving up
// registers.
cuda.kernel @tma(%map: !cuda.tensor_map<bf16>, %y: !cuda.ptr<bf16>) block 384 min_blocks 1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tile = cuda.shared_alloc 8192 : !cuda.ptr<bf16, shared>
  %bars = cuda.shared_alloc 2 : !cuda.ptr<ui64, shared>
  cuda.mbarrier_init %bars[%c0], 1 : !cuda.ptr<ui64, shared>
  cuda.fence_mbarrier_init
  cuda.sync_threads
  cuda.set_max_registers "dec" 40
  cuda.mbarrier_arrive %bars[%c0] expect_tx 16384 : !cuda.ptr<ui64, shared>
  cuda.tma_load %map, %tile[%c0], %bars[%c0], [%c0, %c1] : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
  cuda.mbarrier_wait %bars[%c0], %c1 : !cuda.ptr<ui64, shared>
  cuda.mbarrier_arrive %bars[%c1] : !cuda.ptr<ui64, shared>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @tma(%map: !cuda.tensor_map<bf16>, %y: !cuda.ptr<bf16>) block 384 min_blocks 1 {
// CHECK:         %bars = cuda.shared_alloc 2 : !cuda.ptr<ui64, shared>
// CHECK-NEXT:    cuda.mbarrier_init %bars[%c0], 1 : !cuda.ptr<ui64, shared>
// CHECK-NEXT:    cuda.fence_mbarrier_init
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    cuda.set_max_registers "dec" 40
// CHECK-NEXT:    cuda.mbarrier_arrive %bars[%c0] expect_tx 16384 : !cuda.ptr<ui64, shared>
// CHECK-NEXT:    cuda.tma_load %map, %tile[%c0], %bars[%c0], [%c0, %c1] : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
// CHECK-NEXT:    cuda.mbarrier_wait %bars[%c0], %c1 : !cuda.ptr<ui64, shared>
// CHECK-NEXT:    cuda.mbarrier_arrive %bars[%c1] : !cuda.ptr<ui64, shared>

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "tma", function_type = (!cuda.tensor_map<bf16>, !cuda.ptr<bf16>) -> ()
// CHECK-GENERIC:         "cuda.mbarrier_init"(%bars, %c0) <{count = 1 : i64}> : (!cuda.ptr<ui64, shared>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.fence_mbarrier_init"() : () -> ()
// CHECK-GENERIC:         "cuda.set_max_registers"() <{direction = "dec", count = 40 : i64}> : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.mbarrier_arrive"(%bars, %c0) <{expect_tx = 16384 : i64}> : (!cuda.ptr<ui64, shared>, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.tma_load"(%map, %tile, %c0, %bars, %c0, %c0, %c1) : (!cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, index, !cuda.ptr<ui64, shared>, index, index, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.mbarrier_wait"(%bars, %c0, %c1) : (!cuda.ptr<ui64, shared>, index, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.mbarrier_arrive"(%bars, %c1) : (!cuda.ptr<ui64, shared>, index) -> ()

// -----

// Thread block clusters: a kernel launched in clusters of two blocks; the
// cluster's blocks waiting for each other; a box multicast into both blocks
// (mask 3); an arrival at the barrier of block 1 of the cluster.
cuda.kernel @tma_cluster(%map: !cuda.tensor_map<bf16>) block 384 min_blocks 1 cluster 2 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tile = cuda.shared_alloc 8192 : !cuda.ptr<bf16, shared>
  %bars = cuda.shared_alloc 2 : !cuda.ptr<ui64, shared>
  cuda.cluster_sync
  cuda.tma_load %map, %tile[%c0], %bars[%c0], [%c0, %c1] multicast 3 : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
  cuda.mbarrier_arrive %bars[%c1] cta %c1 : !cuda.ptr<ui64, shared>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @tma_cluster(%map: !cuda.tensor_map<bf16>) block 384 min_blocks 1 cluster 2 {
// CHECK:         cuda.cluster_sync
// CHECK-NEXT:    cuda.tma_load %map, %tile[%c0], %bars[%c0], [%c0, %c1] multicast 3 : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
// CHECK-NEXT:    cuda.mbarrier_arrive %bars[%c1] cta %c1 : !cuda.ptr<ui64, shared>

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "tma_cluster", function_type = (!cuda.tensor_map<bf16>) -> (), block = #builtin.int<384>, min_blocks = #builtin.int<1>, cluster = #builtin.int<2>}> ({
// CHECK-GENERIC:         "cuda.cluster_sync"() : () -> ()
// CHECK-GENERIC-NEXT:    "cuda.tma_load"(%map, %tile, %c0, %bars, %c0, %c0, %c1) <{multicast = 3 : i64}> : (!cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, index, !cuda.ptr<ui64, shared>, index, index, index) -> ()
// CHECK-GENERIC-NEXT:    "cuda.mbarrier_arrive"(%bars, %c1, %c1) : (!cuda.ptr<ui64, shared>, index, index) -> ()

// -----

// A launcher that makes the tensor map of its input (100 rows of 64, read
// in 64x64 boxes) and passes it to a kernel by value.
cuda.kernel @takes_map(%x: !cuda.ptr<bf16>, %map: !cuda.tensor_map<bf16>) block 128 {
  cuda.return
}
cuda.host_func @mapped(%x: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) outputs 1 {
  %m = cuda.make_tensor_map %x [100, 64] box [64, 64] : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
  cuda.launch @takes_map grid [1, 1, 1] block [128, 1, 1](%x, %m) : !cuda.ptr<bf16>, !cuda.tensor_map<bf16>
  cuda.return
}

// CHECK-LABEL: cuda.host_func @mapped(%x: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) outputs 1 {
// CHECK-NEXT:    %m = cuda.make_tensor_map %x [100, 64] box [64, 64] : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
// CHECK-NEXT:    cuda.launch @takes_map grid [1, 1, 1] block [128, 1, 1](%x, %m) : !cuda.ptr<bf16>, !cuda.tensor_map<bf16>

// CHECK-GENERIC-LABEL: "cuda.host_func"() <{sym_name = "mapped"
// CHECK-GENERIC:         %m = "cuda.make_tensor_map"(%x) <{shape = array<i64: 100, 64>, box = array<i64: 64, 64>}> : (!cuda.ptr<bf16>) -> !cuda.tensor_map<bf16>

// -----

// A scatter's writes: an atomic add of each element type CUDA adds (int64
// through the unsigned form), and a launcher that updates its input %cache
// in place (`updates`: no output pointer for it, not const).
cuda.kernel @adds(%f: !cuda.ptr<f32>, %h: !cuda.ptr<bf16>, %n: !cuda.ptr<i64>) block 64 {
  %i = cuda.thread_idx x
  %vf = cuda.load %f[%i] : !cuda.ptr<f32> -> f32
  cuda.atomic_add %vf, %f[%i] : f32, !cuda.ptr<f32>
  %vh = cuda.load %h[%i] : !cuda.ptr<bf16> -> bf16
  cuda.atomic_add %vh, %h[%i] : bf16, !cuda.ptr<bf16>
  %vn = cuda.load %n[%i] : !cuda.ptr<i64> -> i64
  cuda.atomic_add %vn, %n[%i] : i64, !cuda.ptr<i64>
  cuda.return
}
cuda.host_func @step(%cache: !cuda.ptr<f32>, %k: !cuda.ptr<bf16>, %pos: !cuda.ptr<i64>) outputs 0 updates [0] shapes [[64], [64], [64]] {
  cuda.launch @adds grid [1, 1, 1] block [64, 1, 1] (%cache, %k, %pos) : !cuda.ptr<f32>, !cuda.ptr<bf16>, !cuda.ptr<i64>
  cuda.return
}

// CHECK-LABEL: cuda.kernel @adds(%f: !cuda.ptr<f32>, %h: !cuda.ptr<bf16>, %n: !cuda.ptr<i64>) block 64 {
// CHECK:         cuda.atomic_add %vf, %f[%i] : f32, !cuda.ptr<f32>
// CHECK:         cuda.atomic_add %vh, %h[%i] : bf16, !cuda.ptr<bf16>
// CHECK:         cuda.atomic_add %vn, %n[%i] : i64, !cuda.ptr<i64>
// CHECK:       cuda.host_func @step(%cache: !cuda.ptr<f32>, %k: !cuda.ptr<bf16>, %pos: !cuda.ptr<i64>) outputs 0 updates [0] shapes {{\[\[}}64], [64], [64]] {

// CHECK-GENERIC-LABEL: "cuda.kernel"() <{sym_name = "adds"
// CHECK-GENERIC:         "cuda.atomic_add"(%vf, %f, %i) : (f32, !cuda.ptr<f32>, index) -> ()
// CHECK-GENERIC:       "cuda.host_func"() <{sym_name = "step", {{.*}}updates = array<i64: 0>
