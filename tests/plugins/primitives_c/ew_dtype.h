/* One dtype's elementwise kernels: elementwise.c defines EW_ROW, a row of its dtype table, and
 * includes this file, which names the row's fields, brings ew_math.h's functions for a new
 * compute type, makes the kernels (ew_kernels.h) and forgets the row again. No include guard:
 * it is included once per dtype. */

/* Field k of the row. */
#define EW_APPLY(macro, args) macro args
#define EW_FIELD_0(a, ...) a
#define EW_FIELD_1(a, b, ...) b
#define EW_FIELD_2(a, b, c, ...) c
#define EW_FIELD_3(a, b, c, d, ...) d
#define EW_FIELD_4(a, b, c, d, e, ...) e
#define EW_FIELD_5(a, b, c, d, e, f, ...) f
#define EW_FIELD_6(a, b, c, d, e, f, g, ...) g
#define EW_FIELD_7(a, b, c, d, e, f, g, h, ...) h
#define EW_FIELD_8(a, b, c, d, e, f, g, h, i, ...) i
#define EW_FIELD_9(a, b, c, d, e, f, g, h, i, j, ...) j
#define EW_FIELD_10(a, b, c, d, e, f, g, h, i, j, k, ...) k
#define EW_FIELD_11(a, b, c, d, e, f, g, h, i, j, k, l, ...) l
#define EW_FIELD_12(a, b, c, d, e, f, g, h, i, j, k, l, m, ...) m
#define EW_FIELD_13(a, b, c, d, e, f, g, h, i, j, k, l, m, n) n
#define EW_GET(k) EW_APPLY(EW_FIELD_##k, EW_ROW)
#define EW_PASTE_(a, b) a##b
#define EW_PASTE(a, b) EW_PASTE_(a, b)

#define ST EW_GET(0)
#define TS EW_GET(1)
#define TI EW_GET(2)
#define CT EW_GET(3)
#define CS EW_GET(4)
#define EW_CLASS EW_GET(5)
#define LOAD(v) EW_GET(6)(v)
#define STORE(v) EW_GET(7)(v)
#define SCALAR(s) EW_GET(8)(s)
#define EW_LM(fn) EW_PASTE(fn, EW_GET(9))
#define RT EW_GET(10)
#define RST RT
#define EW_SIGNED EW_GET(11)
#define EW_BITS EW_GET(12)

#if EW_GET(13)
#include "ew_math.h"
#endif
#include "ew_kernels.h"

#undef ST
#undef TS
#undef TI
#undef CT
#undef CS
#undef EW_CLASS
#undef LOAD
#undef STORE
#undef SCALAR
#undef EW_LM
#undef RT
#undef RST
#undef EW_SIGNED
#undef EW_BITS
#undef EW_ROW
