// Kernels whose parameter counts kernel_params_test.cc reads back from nvcc's cubin and PTX.
struct Big {
  double v[9];
};
extern "C" __global__ void none() {}
extern "C" __global__ void three(float* a, const float* b, int n) {
  if (static_cast<int>(threadIdx.x) < n) a[threadIdx.x] = b[threadIdx.x];
}
extern "C" __global__ void three_more(Big s, char c, float* p, long long q, short r) {
  if (c) p[0] = static_cast<float>(s.v[0] + static_cast<double>(q) + r);
}
