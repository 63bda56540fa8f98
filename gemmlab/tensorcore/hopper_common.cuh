// The Hopper kernels' common ground (hopper_gemm.cu, flash_hopper.cu): shared-memory addresses,
// mbarriers, TMA copies, register reallocation and the wgmma descriptor, fence, commit and wait.
// gemmlab/tensorcore/hopper/build.py puts this text before each kernel's own source: NVRTC then
// builds one translation unit, with no header files.

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "this Hopper kernel runs on sm_90a only (H100, H200): no other GPU has wgmma, setmaxnreg"
#endif

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;

// cuTensorMapEncodeTiled's output, opaque here: 128 bytes, 64-byte aligned, passed by value.
struct __align__(64) TensorMap { u64 opaque[16]; };

// ---- wgmma's operand lists, written out once --------------------------------------------------
// An m64nN wgmma with FP32 accumulators names N / 2 registers a thread in its asm: "%0, ..." in
// the instruction (WGMMA_R32, WGMMA_R64) and the accumulator array d tied to them, read and
// written ("+f", WGMMA_D32, WGMMA_D64). The operands after them are numbered from 32 or 64.
#define WGMMA_R32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WGMMA_R64 WGMMA_R32 ", " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WGMMA_D32(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), \
    "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), \
    "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), \
    "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), \
    "+f"(d[30]), "+f"(d[31])
#define WGMMA_D64(d) WGMMA_D32(d), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), \
    "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), \
    "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), \
    "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), \
    "+f"(d[62]), "+f"(d[63])

namespace hopper {

// ---- addresses, barriers, copies -----------------------------------------------------------

__device__ __forceinline__ u32 smem_addr(const void* p) {
    u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}

// One arrival that also announces `bytes` more to come from the copy engine.
__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(u32 bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}

// Wait until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n"
        "}\n" :: "r"(bar), "r"(parity) : "memory");
}

// TMA: copy the box at coordinates (c0 innermost, c1) of the tensor into shared memory; the
// barrier's transaction count drops by the box's bytes when it lands (zeros outside the tensor).
__device__ __forceinline__ void tma_load(u32 dst, const TensorMap* map, u32 bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        :: "r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar) : "memory");
}

// The same box, written at the same shared-memory offset in every block of the cluster named in
// `ctas` (bit i: cluster rank i), each of whose barriers at `bar`'s offset counts the bytes.
__device__ __forceinline__ void tma_load_multicast(u32 dst, const TensorMap* map, u32 bar, int c0,
                                                   int c1, u16 ctas) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
        :: "r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(ctas)
        : "memory");
}

// The same for a 3-D tensor (c0 innermost): the attention kernel's [heads][N][D] arrays, so that
// rows past a head's N come in as zeros rather than as the next head's rows.
__device__ __forceinline__ void tma_load_3d(u32 dst, const TensorMap* map, u32 bar, int c0, int c1,
                                            int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];"
        :: "r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}

// Ordinary stores to shared memory become visible to wgmma (the async proxy) after this fence.
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Shared-memory stores and loads by address (the staging buffer), so that they are st.shared and
// ld.shared rather than generic accesses, which the compiler cannot place in shared memory after
// align_1024's integer arithmetic.
__device__ __forceinline__ void st_shared(u32 addr, u32 v) {
    asm volatile("st.shared.b32 [%0], %1;" :: "r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ uint4 ld_shared4(u32 addr) {
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
    return v;
}

// ---- clusters: blocks that read and signal each other's shared memory ----------------------

__device__ __forceinline__ u32 cluster_rank() {
    u32 rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

// One arrival on the barrier at `bar`'s offset in the shared memory of cluster rank `cta` (this
// block's own included). Release at CTA scope, as for a local arrival: a cluster-scope release
// would make the thread wait for all its earlier memory operations to be visible cluster-wide
// (C's stores included), on every slice.
__device__ __forceinline__ void mbar_arrive_cluster(u32 bar, u32 cta) {
    asm volatile(
        "{\n"
        ".reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
        "}\n" :: "r"(bar), "r"(cta) : "memory");
}

// Every thread of every block of the cluster: none goes on before all have arrived.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// A barrier for the 128 threads of one consumer warpgroup (ids 1, 2; 0 is __syncthreads).
__device__ __forceinline__ void warpgroup_barrier(int id) {
    asm volatile("bar.sync %0, 128;" :: "r"(id) : "memory");
}

template <int REGS> __device__ __forceinline__ void regs_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(REGS));
}

template <int REGS> __device__ __forceinline__ void regs_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(REGS));
}

// ---- wgmma ---------------------------------------------------------------------------------

// Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride byte
// offsets (all >> 4), swizzle mode 1 in bits 62-63. Tiles start on 1024-byte boundaries.
__device__ __forceinline__ u64 descriptor(u32 addr, u32 leading, u32 stride) {
    return (u64)((addr & 0x3FFFF) >> 4) | ((u64)((leading & 0x3FFFF) >> 4) << 16)
         | ((u64)((stride & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}

// Tell the compiler the accumulators may change here, so no read of them moves across a wait.
template <int M, int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[M][N]) {
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[m][i]) :: "memory");
}

}  // namespace hopper
