/* A stand-in for libcuda.so.1, for the CPU tests of the runtime's launch
 * path (tests/test_launch.py): the few entry points the launches reach,
 * found through cuGetProcAddress_v2 as cuda.bindings finds them. Each call
 * records its arguments; `fake_result` is what the launches return. */
#include <stdint.h>
#include <string.h>

typedef int CUresult;

/* What the last call was given, read back by the tests through ctypes. */
uint64_t fake_last[16];
int fake_calls;
int fake_last_cooperative;
int fake_result;
int fake_capturing;
int fake_param_count; /* how many parameter values a launch records (<= 4) */
uint64_t fake_flags;
char fake_hidden[64]; /* a name cuGetProcAddress does not find */
int fake_occupancy = 2;
int fake_attribute[2]; /* the first launch attribute's id and value */

CUresult cuDriverGetVersion(int *version) {
    *version = 13000;
    return 0;
}

CUresult cuInit(unsigned int flags) {
    (void)flags;
    return 0;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
    switch (error) {
    case 0: *text = "no error"; return 0;
    case 1: *text = "invalid argument"; return 0;
    case 700: *text = "an illegal memory access was encountered"; return 0;
    default: *text = 0; return 1;
    }
}

CUresult cuGetErrorName(CUresult error, const char **text) {
    return cuGetErrorString(error, text);
}

static CUresult record(uint64_t f, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned shared,
                       uint64_t stream, void **params) {
    fake_calls++;
    fake_last[0] = f;
    fake_last[1] = gx; fake_last[2] = gy; fake_last[3] = gz;
    fake_last[4] = bx; fake_last[5] = by; fake_last[6] = bz;
    fake_last[7] = shared;
    fake_last[8] = stream;
    fake_last[9] = (uint64_t)(uintptr_t)params;
    /* The first parameters' values, as the kernel would see them. */
    for (int i = 0; i < fake_param_count && i < 4 && params; i++)
        fake_last[10 + i] = *(uint64_t *)params[i];
    return fake_result;
}

CUresult cuLaunchKernel(uint64_t f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        uint64_t stream, void **params, void **extra) {
    fake_last_cooperative = 0;
    fake_last[14] = (uint64_t)(uintptr_t)extra;
    return record(f, gx, gy, gz, bx, by, bz, shared, stream, params);
}

CUresult cuLaunchCooperativeKernel(uint64_t f, unsigned gx, unsigned gy,
                                   unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared,
                                   uint64_t stream, void **params) {
    fake_last_cooperative = 1;
    return record(f, gx, gy, gz, bx, by, bz, shared, stream, params);
}

/* CUlaunchConfig, as cuda.h lays it out. */
typedef struct {
    unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    uint64_t hStream;
    void *attrs;
    unsigned numAttrs;
} CUlaunchConfig;

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, uint64_t f, void **params,
                          void **extra) {
    fake_last_cooperative = 0;
    fake_last[14] = (uint64_t)(uintptr_t)extra;
    fake_last[15] = c->numAttrs;
    /* CUlaunchAttribute: an int id, 4 bytes of padding, a union of values. */
    fake_attribute[0] = c->numAttrs ? *(int *)c->attrs : -1;
    fake_attribute[1] = c->numAttrs ? *(int *)((char *)c->attrs + 8) : -1;
    return record(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
                  c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream,
                  params);
}

CUresult cuStreamIsCapturing(uint64_t stream, int *status) {
    fake_calls++;
    fake_last[8] = stream;
    *status = fake_capturing;
    return 0;
}

CUresult cuGraphLaunch(uint64_t exec, uint64_t stream) {
    fake_calls++;
    fake_last[0] = exec;
    fake_last[8] = stream;
    return fake_result;
}

CUresult cuFuncSetAttribute(uint64_t f, int attribute, int value) {
    (void)f; (void)attribute; (void)value;
    return 0;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, uint64_t f,
                                                     int threads,
                                                     size_t shared) {
    (void)f; (void)threads; (void)shared;
    *blocks = fake_occupancy;
    return 0;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                             uint64_t flags, int *status) {
    static const struct { const char *name; void *f; } table[] = {
        {"cuDriverGetVersion", (void *)cuDriverGetVersion},
        {"cuInit", (void *)cuInit},
        {"cuGetErrorString", (void *)cuGetErrorString},
        {"cuGetErrorName", (void *)cuGetErrorName},
        {"cuLaunchKernel", (void *)cuLaunchKernel},
        {"cuLaunchKernelEx", (void *)cuLaunchKernelEx},
        {"cuLaunchCooperativeKernel", (void *)cuLaunchCooperativeKernel},
        {"cuStreamIsCapturing", (void *)cuStreamIsCapturing},
        {"cuGraphLaunch", (void *)cuGraphLaunch},
        {"cuFuncSetAttribute", (void *)cuFuncSetAttribute},
        {"cuOccupancyMaxActiveBlocksPerMultiprocessor",
         (void *)cuOccupancyMaxActiveBlocksPerMultiprocessor},
        {"cuGetProcAddress", (void *)cuGetProcAddress_v2},
    };
    (void)version;
    *pfn = 0;
    if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    if (strcmp(symbol, fake_hidden) == 0) return 0;
    for (unsigned i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(symbol, table[i].name) == 0) {
            *pfn = table[i].f;
            fake_flags = flags;
            if (status) *status = 0;
        }
    return 0;
}
