/* Tiny check helpers shared by the C-level tests (C, no framework). */
#ifndef DLARRAY_TESTS_SEED_API_SELFTEST_H_
#define DLARRAY_TESTS_SEED_API_SELFTEST_H_

#include <stdio.h>
#include <string.h>

/* Counts failures; the first one is written to the caller's report buffer, every one to stderr. */
typedef struct {
  int failures;
  char* report;
  int report_size;
} SelfTest;

static inline void SelfTestCheck(SelfTest* t, int ok, const char* what, const char* file, int line,
                                 const char* last_error) {
  if (ok) return;
  fprintf(stderr, "%s:%d: check failed: %s (last error: \"%s\")\n", file, line, what, last_error);
  if (t->failures == 0 && t->report != NULL && t->report_size > 0) {
    snprintf(t->report, (size_t)t->report_size, "%s:%d: %s (last error: \"%s\")", file, line, what,
             last_error);
  }
  t->failures++;
}

/* CHECK(cond) and CHECK_ERR(call, text) (call returns -1 and the last error contains text), in
 * functions whose SelfTest* is named t. The call runs before the last error is read: a pointer
 * read earlier may dangle once the call stores a new message. */
#define CHECK(cond)                                                     \
  do {                                                                  \
    const int ok_ = (cond) ? 1 : 0;                                     \
    SelfTestCheck(t, ok_, #cond, __FILE__, __LINE__, DLGetLastError()); \
  } while (0)
#define CHECK_ERR(call, text)                                                                     \
  do {                                                                                            \
    const int rc_ = (call);                                                                       \
    const char* err_ = DLGetLastError();                                                          \
    SelfTestCheck(t, rc_ == -1 && strstr(err_, (text)) != NULL, #call " fails with \"" text "\"", \
                  __FILE__, __LINE__, err_);                                                      \
  } while (0)

#endif /* DLARRAY_TESTS_SEED_API_SELFTEST_H_ */
