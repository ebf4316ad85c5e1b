/* SPDX-License-Identifier: MIT */
/*
 * bench_trace_gen OUT.json SIZE_MB [SEED [RANK]]: write a synthetic PyTorch-profiler (Kineto) trace
 * of about SIZE_MB megabytes (10^6 bytes) for bench_trace. The mix follows the shared HTA NCCL
 * trace (hta_nccl_2xa100_rank0): per GPU activity about nine host-side events (cpu_op,
 * cuda_runtime, ac2g flows), kernels with Kineto's args, memcpy/memset, and an NCCL AllReduce on
 * its own stream every 150 kernels; deviceProperties and distributedInfo at the end, as Kineto
 * writes them.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *const kernels[] = {
    "void "
    "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(cutlass_80_tensorop_"
    "s1688gemm_256x64_16x4_nn_align4::Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, "
    "float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, "
    "float*, float const*, float*, float*, float const*, float const*, float)",
    "ampere_sgemm_128x64_tn",
    "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
    "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)",
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_"
    "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
    "float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUT.json SIZE_MB [SEED [RANK]]\n", argv[0]);
        return 2;
    }
    char *end;
    double size_mb = strtod(argv[2], &end);
    if (end == argv[2] || *end || !(size_mb > 0 && size_mb <= 1e6)) {
        fprintf(stderr, "%s: SIZE_MB '%s' is not a number in (0, 1e6]\n", argv[0], argv[2]);
        return 2;
    }
    const long long target = (long long)(size_mb * 1e6); /* ≤ 10^12 bytes: exact */
    if (argc > 3)
        rng ^= strtoull(argv[3], NULL, 10) * 0x9E3779B97F4A7C15ull;
    int rank = argc > 4 ? atoi(argv[4]) : 0;
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    long long bytes = fprintf(f, "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n");
    bytes += fprintf(f, "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 4458676416431.397, "
                        "\"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"python3.10\"}}");
    uint64_t corr = 1000;
    uint64_t gpu_us1000 = 4458676983543183ull; /* ns */
    uint64_t cpu_ns = gpu_us1000 - 5000000;
    uint64_t n_gpu = 0, n_events = 1;
    const size_t nk = sizeof kernels / sizeof kernels[0];
    while (bytes < target) {
        /* host side: an op, a launch, a flow start */
        unsigned op_dur = 5000 + (unsigned)(next() % 40000);
        bytes += fprintf(
            f,
            ",\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", "
            "\"pid\": 2910249, \"tid\": 2910249, \"ts\": %" PRIu64 ".%03u, \"dur\": %u.%03u, "
            "\"args\": {\"External id\": %" PRIu64 ", \"Sequence number\": %" PRIu64
            ", \"Fwd thread id\": 0, \"Record function id\": 0, \"Ev Idx\": %" PRIu64 "}}",
            cpu_ns / 1000, (unsigned)(cpu_ns % 1000), op_dur / 1000, op_dur % 1000, corr, corr,
            corr);
        for (int k = 0; k < 3; k++)
            bytes += fprintf(f,
                             ",\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", "
                             "\"pid\": 2910249, \"tid\": 2910249, \"ts\": %" PRIu64
                             ".%03u, \"dur\": 2.%03u, "
                             "\"args\": {\"External id\": %" PRIu64 ", \"Ev Idx\": %" PRIu64 "}}",
                             (cpu_ns + 100 * (unsigned)k) / 1000, (unsigned)((cpu_ns + 1) % 1000),
                             (unsigned)(next() % 1000), corr, corr + (unsigned)k);
        bytes += fprintf(
            f,
            ",\n  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
            "\"pid\": 2910249, \"tid\": 2910249, \"ts\": %" PRIu64 ".%03u, \"dur\": 4.%03u, "
            "\"args\": {\"External id\": %" PRIu64 ", \"cbid\": 211, \"correlation\": %" PRIu64
            "}}",
            (cpu_ns + 1000) / 1000, (unsigned)(cpu_ns % 1000), (unsigned)(next() % 1000), corr,
            corr);
        bytes +=
            fprintf(f,
                    ",\n  {\"ph\": \"s\", \"id\": %" PRIu64 ", \"pid\": 2910249, \"tid\": 2910249, "
                    "\"ts\": %" PRIu64 ".%03u, \"cat\": \"ac2g\", \"name\": \"ac2g\"}",
                    corr, (cpu_ns + 1000) / 1000, (unsigned)(cpu_ns % 1000));
        bytes += fprintf(f,
                         ",\n  {\"ph\": \"f\", \"id\": %" PRIu64 ", \"pid\": 0, \"tid\": 7, "
                         "\"ts\": %" PRIu64
                         ".%03u, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}",
                         corr, gpu_us1000 / 1000, (unsigned)(gpu_us1000 % 1000));
        n_events += 7;
        /* GPU side */
        uint64_t r = next();
        unsigned dur = 1500 + (unsigned)(r % 60000);
        if (n_gpu % 150 == 149) {
            unsigned nd = 200000 + (unsigned)(r % 2000000);
            bytes += fprintf(
                f,
                ",\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                "\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, "
                "ncclWork*)\", "
                "\"pid\": 0, \"tid\": 40, \"ts\": %" PRIu64 ".%03u, \"dur\": %u.%03u, \"args\": {"
                "\"External id\": %" PRIu64
                ", \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 40, "
                "\"correlation\": %" PRIu64
                ", \"registers per thread\": 96, \"shared memory\": 87568, "
                "\"blocks per SM\": 0.074074, \"warps per SM\": 1.259259, \"grid\": [8, 1, 1], "
                "\"block\": [544, 1, 1], \"est. achieved occupancy %%\": 0, \"Collective name\": "
                "\"allreduce\", "
                "\"In msg nelems\": 6637568, \"Out msg nelems\": 6637568, \"Group size\": 2, "
                "\"dtype\": \"Float\", "
                "\"Process Group Name\": \"0\", \"Process Group Ranks\": \"[0, 1]\"}}",
                gpu_us1000 / 1000, (unsigned)(gpu_us1000 % 1000), nd / 1000, nd % 1000, corr, corr);
        } else if (r % 10 == 0) {
            bytes += fprintf(
                f,
                ",\n  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD (Device -> "
                "Device)\", "
                "\"pid\": 0, \"tid\": 7, \"ts\": %" PRIu64 ".%03u, \"dur\": %u.%03u, \"args\": {"
                "\"External id\": %" PRIu64 ", \"device\": 0, \"context\": 1, \"stream\": 7, "
                "\"correlation\": %" PRIu64
                ", \"bytes\": 8192000, \"memory bandwidth (GB/s)\": 486.6920152091255}}",
                gpu_us1000 / 1000, (unsigned)(gpu_us1000 % 1000), dur / 1000, dur % 1000, corr,
                corr);
        } else if (r % 37 == 0) {
            bytes += fprintf(
                f,
                ",\n  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", "
                "\"pid\": 0, \"tid\": 7, \"ts\": %" PRIu64 ".%03u, \"dur\": %u.%03u, \"args\": {"
                "\"External id\": %" PRIu64 ", \"device\": 0, \"context\": 1, \"stream\": 7, "
                "\"correlation\": %" PRIu64
                ", \"bytes\": 6291456, \"memory bandwidth (GB/s)\": 1268.4387096774194}}",
                gpu_us1000 / 1000, (unsigned)(gpu_us1000 % 1000), dur / 1000, dur % 1000, corr,
                corr);
        } else {
            bytes += fprintf(
                f,
                ",\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", "
                "\"pid\": 0, \"tid\": 7, \"ts\": %" PRIu64 ".%03u, \"dur\": %u.%03u, \"args\": {"
                "\"External id\": %" PRIu64
                ", \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, "
                "\"correlation\": %" PRIu64
                ", \"registers per thread\": 40, \"shared memory\": 400, "
                "\"blocks per SM\": 4.740741, \"warps per SM\": 75.851852, \"grid\": [512, 1, 1], "
                "\"block\": [512, 1, 1], \"est. achieved occupancy %%\": 75}}",
                kernels[(r >> 8) % nk], gpu_us1000 / 1000, (unsigned)(gpu_us1000 % 1000),
                dur / 1000, dur % 1000, corr, corr);
        }
        n_gpu++;
        n_events++;
        if (n_gpu % 150 != 0)
            gpu_us1000 += dur + 500 + (next() % 3000);
        cpu_ns += op_dur + 2000;
        corr++;
    }
    bytes += fprintf(
        f,
        "\n  ],\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\", "
        "\"totalGlobalMem\": 85899345920, \"computeMajor\": 8, \"computeMinor\": 0, \"numSms\": "
        "108}],\n"
        "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d},\n"
        "  \"traceName\": \"synthetic\"\n}\n",
        rank, rank + 1);
    if (fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    fprintf(stderr, "%s: %lld bytes, %" PRIu64 " events, %" PRIu64 " GPU activities\n", argv[1],
            bytes, n_events, n_gpu);
    return 0;
}
