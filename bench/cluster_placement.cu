// cluster_placement.cu -- where the hardware puts a persistent GEMM's clusters: for each cluster index, the SMs its
// CTAs run on and the GPC those SMs belong to. A tile order that hands consecutive cluster indices a compact block of
// tiles (examples/idioms/gemm_sm90_grouped_tiles.cuh) shares operands within a GPC only if consecutive indices land
// in one. On the H100 (2026-12-06) they do not: cluster c runs on the c-th TPC of a fixed order, and consecutive TPCs
// lie in different GPCs (c and c + 8 share one), the same in every launch.
//   nvcc -std=c++17 -arch=sm_90a -o /tmp/cluster_placement bench/cluster_placement.cu && /tmp/cluster_placement [N]
// GPCs: a 16-CTA cluster (the largest, non-portable size) must fit in one GPC, so as many of them as fit at once,
// one CTA per SM, name the GPCs by the SMs they cover. Then N 2-CTA clusters (default: as many as fit, like the
// flagship's 128x256 kernel with its ~214 KB of shared memory) print their SMs and GPCs in cluster-index order.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

namespace cg = cooperative_groups;

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    cudaError_t err_ = (call);                                                                       \
    if (err_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)

__device__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// One entry per CTA: its cluster index, its rank in the cluster, its SM. Every CTA of a cluster waits for the
// others (cluster.sync) so that the whole cluster is resident at once, as the GEMM's are.
__global__ void record(int* cluster_of, int* rank_of, int* sm_of) {
  extern __shared__ char hold[];  // sized by the launch: one CTA per SM
  cg::cluster_group cluster = cg::this_cluster();
  const int cta = blockIdx.x + blockIdx.y * gridDim.x;
  if (threadIdx.x == 0) {
    hold[0] = 0;
    const int clusters_x = gridDim.x / cluster.dim_blocks().x;
    cluster_of[cta] = blockIdx.x / cluster.dim_blocks().x + (blockIdx.y / cluster.dim_blocks().y) * clusters_x;
    rank_of[cta] = int(cluster.block_rank());
    sm_of[cta] = int(sm_id());
  }
  cluster.sync();
}

struct Placement {
  std::vector<int> cluster, rank, sm;
};

Placement launch(int cluster_size, int clusters, size_t smem) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(cluster_size * clusters, 1, 1);
  config.blockDim = dim3(128, 1, 1);
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = cluster_size;
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  const int ctas = cluster_size * clusters;
  int *cluster_of, *rank_of, *sm_of;
  CHECK(cudaMalloc(&cluster_of, ctas * sizeof(int)));
  CHECK(cudaMalloc(&rank_of, ctas * sizeof(int)));
  CHECK(cudaMalloc(&sm_of, ctas * sizeof(int)));
  CHECK(cudaLaunchKernelEx(&config, record, cluster_of, rank_of, sm_of));
  CHECK(cudaDeviceSynchronize());
  Placement p{std::vector<int>(ctas), std::vector<int>(ctas), std::vector<int>(ctas)};
  CHECK(cudaMemcpy(p.cluster.data(), cluster_of, ctas * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(p.rank.data(), rank_of, ctas * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(p.sm.data(), sm_of, ctas * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(cluster_of));
  CHECK(cudaFree(rank_of));
  CHECK(cudaFree(sm_of));
  return p;
}

int max_clusters(int cluster_size, size_t smem) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(cluster_size * 64, 1, 1);
  config.blockDim = dim3(128, 1, 1);
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim = {unsigned(cluster_size), 1, 1};
  config.attrs = attribute;
  config.numAttrs = 1;
  int n = 0;
  CHECK(cudaOccupancyMaxActiveClusters(&n, record, &config));
  return n;
}

int main(int argc, char** argv) {
  const size_t smem = 200 * 1024;  // one CTA per SM, as the GEMM
  CHECK(cudaFuncSetAttribute(record, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  CHECK(cudaFuncSetAttribute(record, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

  const int gpcs = max_clusters(16, smem);
  const Placement wide = launch(16, gpcs, smem);
  std::map<int, int> gpc_of;  // SM -> GPC (the index of the 16-CTA cluster that ran there)
  std::printf("SMs %d; 16-CTA clusters at once: %d\n", sms, gpcs);
  for (int g = 0; g < gpcs; ++g) {
    std::printf("gpc %d:", g);
    for (size_t i = 0; i < wide.sm.size(); ++i) {
      if (wide.cluster[i] == g) {
        gpc_of[wide.sm[i]] = g;
        std::printf(" %d", wide.sm[i]);
      }
    }
    std::printf("\n");
  }
  const int pairs = argc > 1 ? std::atoi(argv[1]) : max_clusters(2, smem);
  std::printf("2-CTA clusters at once: %d; launched: %d\n", max_clusters(2, smem), pairs);
  for (int repeat = 0; repeat < 2; ++repeat) {
    const Placement p = launch(2, pairs, smem);
    std::printf("launch %d, cluster: SMs (GPC; -1 = no 16-CTA cluster covered the SM)\n", repeat);
    for (int c = 0; c < pairs; ++c) {
      std::printf("%3d:", c);
      for (size_t i = 0; i < p.sm.size(); ++i) {
        if (p.cluster[i] == c) {
          const auto g = gpc_of.find(p.sm[i]);
          std::printf(" %3d(%d)", p.sm[i], g == gpc_of.end() ? -1 : g->second);
        }
      }
      std::printf("%s", c % 4 == 3 ? "\n" : "   ");
    }
    std::printf("\n");
  }
  return 0;
}
