// Issue 46.6, on a GPU machine: nvcc -O3 -arch=sm_90 -o /tmp/placement scripts/gpu-46-placement.cu && /tmp/placement
// Does the time of ex10's histogram_private depend on where the 256 global bins lie?
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>
#include "../reference/ex10-histogram/kernels/histogram_private.cu"
#include "../exercises/ex10-histogram/yardsticks/histogram_patterns.cu"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
int main() {
    const unsigned n = 503316480u;
    const char *text = "etaoinshrdlcumwfgypbvkjxqz";
    std::vector<std::pair<unsigned char, double>> w;
    for (int b = 0; b < 256; ++b) w.push_back({(unsigned char)b, 4.0 / 64 / 256});
    w.push_back({' ', 10.0 / 64});
    const char *punct = ".,;:'\"!?-()\n";
    for (const char *p = punct; *p; ++p) w.push_back({(unsigned char)*p, 3.0 / 64 / 12});
    for (int k = 0; k < 26; ++k) w.push_back({(unsigned char)(text[k] - 32), 3.0 / 64 / 26});
    for (int k = 0; k < 26; ++k) w.push_back({(unsigned char)text[k], 44.0 / 64 * (2.0 * (26 - k) - 1) / (26.0 * 26)});
    std::vector<double> cum; double s = 0; for (auto &p : w) { s += p.second; cum.push_back(s); }
    std::vector<unsigned char> table(65536);
    for (int i = 0; i < 65536; ++i) { double u = (i + 0.5) / 65536 * s; table[i] = w[std::lower_bound(cum.begin(), cum.end(), u) - cum.begin()].first; }
    std::vector<unsigned char> h(n);
    std::mt19937 rng(1);
    for (unsigned i = 0; i < n; ++i) h[i] = table[rng() & 0xFFFF];
    unsigned char *d; CK(cudaMalloc(&d, n)); CK(cudaMemcpy(d, h.data(), n, cudaMemcpyHostToDevice));
    char *pool; size_t poolb = 64ull << 20; CK(cudaMalloc(&pool, poolb));
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    auto timeit = [&](unsigned *bins, int which, int reps) {
        std::vector<float> t;
        for (int r = 0; r < reps + 2; ++r) {
            CK(cudaMemset(bins, 0, 1024));
            cudaEventRecord(a);
            if (which == 0) histogram_private<<<(n + 255) / 256, 256>>>(d, n, bins);
            else global_pattern<<<(n + 255) / 256, 256>>>(d, n, bins);
            cudaEventRecord(b);
            CK(cudaEventSynchronize(b)); float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 2) t.push_back(ms);
        }
        std::sort(t.begin(), t.end()); return t[t.size() / 2];
    };
    for (int which = 0; which < 2; ++which) {
        const char *name = which ? "global_pattern" : "histogram_private";
        size_t offs[] = {0, 1024, 2048, 4096, 8192, 16384, 65536, 262144, 1 << 20, 2 << 20, 3 << 20, 8 << 20, 16 << 20, 32 << 20, (48 << 20) + 12345 * 256};
        for (size_t o : offs) printf("%s pool+%zu: %.3f ms\n", name, o, timeit((unsigned *)(pool + o), which, 3));
        // K placements 1280 bytes apart from each base: their mean and median, base to base.
        size_t bases[] = {0, 3 << 20, (7 << 20) + 512, 13 << 20, (21 << 20) + 9 * 4096, 40 << 20, (55 << 20) + 768};
        for (int K : {8, 16, 32}) {
            for (size_t base : bases) {
                std::vector<float> v;
                for (int j = 0; j < K; ++j) v.push_back(timeit((unsigned *)(pool + base + j * 1280), which, 1));
                double mean = 0; for (float x : v) mean += x; mean /= K;
                std::sort(v.begin(), v.end());
                printf("%s K=%d base %zu: mean %.3f median %.3f min %.3f max %.3f\n", name, K, base, mean, v[K / 2], v[0], v[K - 1]);
            }
        }
    }
    return 0;
}
