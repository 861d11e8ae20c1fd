/* ctest runner for the seed C API's C-level checks (seed_api_selftest.c). */
#include <stdio.h>

int seed_api_selftest(char* report, int report_size);
int seed_api_selftest_has_gpu(void);

int main(void) {
  char report[1024];
  int failures = seed_api_selftest(report, (int)sizeof(report));
  if (failures != 0) {
    printf("%d check(s) failed; first: %s\n", failures, report);
    return 1;
  }
  printf(
      "libc_runtime_api.so: every C-level check passed on cpu(0)%s\n",
      seed_api_selftest_has_gpu() ? " and gpu(0)" : " (gpu(0) not usable here: checked its error)");
  return 0;
}
