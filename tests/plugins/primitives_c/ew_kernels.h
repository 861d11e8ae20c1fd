/* The kernels of every op of dlarray/elementwise_table.h for one storage dtype: included by
 * ew_dtype.h once per dtype, with
 *   ST the storage type, TS its suffix in names, TI its DT_ index, CT / CS its compute type and
 *   that type's suffix (ew_math.h's functions), LOAD(v) storage -> compute, STORE(v) compute ->
 *   storage, SCALAR(s) a double attribute as NumPy applies it to this dtype (rounded to it, or
 *   truncated and wrapped for integers), EW_CLASS (ew_math.h) and, for complex dtypes, RST the
 *   storage type of a part.
 * An op is made only for the dtypes of its set: EW_WHEN(set)(code) keeps code when this dtype is
 * in the set (EW_IN_<set> is EW_KEEP) and drops it otherwise (EW_DROP). */
#if EW_CLASS == EW_FLOAT
#define EW_IN_kFloatTypes EW_KEEP
#define EW_IN_kRealNumericTypes EW_KEEP
#define EW_IN_kNumericComplexTypes EW_KEEP
#define EW_IN_kFloatComplexTypes EW_KEEP
#define EW_IN_kComplexTypes EW_DROP
#define EW_IN_kIntegerTypes EW_DROP
#define EW_IN_kIntegralTypes EW_DROP
#define EW_IN_kRealTypes EW_KEEP
#elif EW_CLASS == EW_INT
#define EW_IN_kFloatTypes EW_DROP
#define EW_IN_kRealNumericTypes EW_KEEP
#define EW_IN_kNumericComplexTypes EW_KEEP
#define EW_IN_kFloatComplexTypes EW_DROP
#define EW_IN_kComplexTypes EW_DROP
#define EW_IN_kIntegerTypes EW_KEEP
#define EW_IN_kIntegralTypes EW_KEEP
#define EW_IN_kRealTypes EW_KEEP
#elif EW_CLASS == EW_BOOL
#define EW_IN_kFloatTypes EW_DROP
#define EW_IN_kRealNumericTypes EW_DROP
#define EW_IN_kNumericComplexTypes EW_DROP
#define EW_IN_kFloatComplexTypes EW_DROP
#define EW_IN_kComplexTypes EW_DROP
#define EW_IN_kIntegerTypes EW_DROP
#define EW_IN_kIntegralTypes EW_KEEP
#define EW_IN_kRealTypes EW_KEEP
#else /* EW_COMPLEX */
#define EW_IN_kFloatTypes EW_DROP
#define EW_IN_kRealNumericTypes EW_DROP
#define EW_IN_kNumericComplexTypes EW_KEEP
#define EW_IN_kFloatComplexTypes EW_KEEP
#define EW_IN_kComplexTypes EW_KEEP
#define EW_IN_kIntegerTypes EW_DROP
#define EW_IN_kIntegralTypes EW_DROP
#define EW_IN_kRealTypes EW_DROP
#endif
#define EW_IN_kStorageTypes EW_KEEP

/* The kernels: ew_<op>_<TS>(a, b, out, n, s). The locals end in '_' so that they never meet the
 * table's input names (x, a, b, grad, y, dy, value). */
#define EW_K1(name, x, dtypes, expr, grads, doc)                                       \
  EW_WHEN(dtypes)                                                                      \
  (static void EW_NAME(name, TS)(const void* a_, const void* b_, void* y_, int64_t n_, \
                                 double s_) {                                          \
    const ST* p_ = (const ST*)a_;                                                      \
    ST* q_ = (ST*)y_;                                                                  \
    int64_t i_;                                                                        \
    (void)b_, (void)s_;                                                                \
    for (i_ = 0; i_ < n_; ++i_) {                                                      \
      const CT x = LOAD(p_[i_]);                                                       \
      q_[i_] = STORE(expr);                                                            \
    }                                                                                  \
  })
#define EW_K2(name, a, b, dtypes, expr, grads, doc)                                    \
  EW_WHEN(dtypes)                                                                      \
  (static void EW_NAME(name, TS)(const void* a_, const void* b_, void* y_, int64_t n_, \
                                 double s_) {                                          \
    const ST* p_ = (const ST*)a_;                                                      \
    const ST* r_ = (const ST*)b_;                                                      \
    ST* q_ = (ST*)y_;                                                                  \
    int64_t i_;                                                                        \
    (void)s_;                                                                          \
    for (i_ = 0; i_ < n_; ++i_) {                                                      \
      const CT a = LOAD(p_[i_]);                                                       \
      const CT b = LOAD(r_[i_]);                                                       \
      q_[i_] = STORE(expr);                                                            \
    }                                                                                  \
  })
#define EW_KS(name, x, s, dtypes, expr, grads, doc)                                    \
  EW_WHEN(dtypes)                                                                      \
  (static void EW_NAME(name, TS)(const void* a_, const void* b_, void* y_, int64_t n_, \
                                 double s_) {                                          \
    const ST* p_ = (const ST*)a_;                                                      \
    ST* q_ = (ST*)y_;                                                                  \
    const CT s = SCALAR(s_);                                                           \
    int64_t i_;                                                                        \
    (void)b_;                                                                          \
    for (i_ = 0; i_ < n_; ++i_) {                                                      \
      const CT x = LOAD(p_[i_]);                                                       \
      q_[i_] = STORE(expr);                                                            \
    }                                                                                  \
  })
#define EW_P1(name, x, dtypes, expr, doc)                                              \
  EW_WHEN(dtypes)                                                                      \
  (static void EW_NAME(name, TS)(const void* a_, const void* b_, void* y_, int64_t n_, \
                                 double s_) {                                          \
    const ST* p_ = (const ST*)a_;                                                      \
    uint8_t* q_ = (uint8_t*)y_;                                                        \
    int64_t i_;                                                                        \
    (void)b_, (void)s_;                                                                \
    for (i_ = 0; i_ < n_; ++i_) {                                                      \
      const CT x = LOAD(p_[i_]);                                                       \
      q_[i_] = (expr) ? 1 : 0;                                                         \
    }                                                                                  \
  })
#define EW_P2(name, a, b, dtypes, expr, doc)                                           \
  EW_WHEN(dtypes)                                                                      \
  (static void EW_NAME(name, TS)(const void* a_, const void* b_, void* y_, int64_t n_, \
                                 double s_) {                                          \
    const ST* p_ = (const ST*)a_;                                                      \
    const ST* r_ = (const ST*)b_;                                                      \
    uint8_t* q_ = (uint8_t*)y_;                                                        \
    int64_t i_;                                                                        \
    (void)s_;                                                                          \
    for (i_ = 0; i_ < n_; ++i_) {                                                      \
      const CT a = LOAD(p_[i_]);                                                       \
      const CT b = LOAD(r_[i_]);                                                       \
      q_[i_] = (expr) ? 1 : 0;                                                         \
    }                                                                                  \
  })
#define EW_R1(name, x, expr, doc)                                                      \
  EW_WHEN(kComplexTypes)                                                               \
  (static void EW_NAME(name, TS)(const void* a_, const void* b_, void* y_, int64_t n_, \
                                 double s_) {                                          \
    const ST* p_ = (const ST*)a_;                                                      \
    RST* q_ = (RST*)y_;                                                                \
    int64_t i_;                                                                        \
    (void)b_, (void)s_;                                                                \
    for (i_ = 0; i_ < n_; ++i_) {                                                      \
      const CT x = LOAD(p_[i_]);                                                       \
      q_[i_] = (RST)(expr);                                                            \
    }                                                                                  \
  })
EW_ALL_OPS(EW_K1, EW_K2, EW_KS, EW_P1, EW_P2, EW_R1)
#undef EW_K1
#undef EW_K2
#undef EW_KS
#undef EW_P1
#undef EW_P2
#undef EW_R1

/* ew_fill_<TS>(): enters this dtype's kernels into the table ew_fns[op][dtype]. */
#define EW_F1(name, x, dtypes, expr, grads, doc) \
  EW_WHEN(dtypes)(ew_fns[EW_OP_##name][TI] = EW_NAME(name, TS);)
#define EW_F2(name, a, b, dtypes, expr, grads, doc) EW_F1(name, a, dtypes, expr, grads, doc)
#define EW_FP1(name, x, dtypes, expr, doc) EW_F1(name, x, dtypes, expr, , doc)
#define EW_FP2(name, a, b, dtypes, expr, doc) EW_F1(name, a, dtypes, expr, , doc)
#define EW_FR1(name, x, expr, doc) EW_F1(name, x, kComplexTypes, expr, , doc)
static void EW_NAME(fill, TS)(void) { EW_ALL_OPS(EW_F1, EW_F2, EW_F2, EW_FP1, EW_FP2, EW_FR1) }
#undef EW_F1
#undef EW_F2
#undef EW_FP1
#undef EW_FP2
#undef EW_FR1

#undef EW_IN_kFloatTypes
#undef EW_IN_kRealNumericTypes
#undef EW_IN_kNumericComplexTypes
#undef EW_IN_kFloatComplexTypes
#undef EW_IN_kComplexTypes
#undef EW_IN_kIntegerTypes
#undef EW_IN_kIntegralTypes
#undef EW_IN_kRealTypes
#undef EW_IN_kStorageTypes
