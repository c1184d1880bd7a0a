/* ssewire scanner kernels: line ends, JSON structure and UTF-8 validation/transcoding, written once over a small
 * vector vocabulary (SW_*) and built for SSE2 and AVX2 (the latter chosen at run time where the CPU has it); plain
 * C without either. Pure C99 (no Python.h): sw_kernels_py.h builds str objects with them, and scanner_c.pyx
 * includes both through kernels.pxd; tests/c/test_kernels.c tests them as C. Every function is static. */
#ifndef SSEWIRE_KERNELS_H
#define SSEWIRE_KERNELS_H

#include <stdint.h>
#include <string.h>

#include "sw_types.h"

#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#define SSEWIRE_SIMD 1
#if defined(__x86_64__) && !defined(SSEWIRE_NO_AVX2)
/* AVX2 versions of the hottest loops, compiled for that target only and chosen at run time */
#include <immintrin.h>
#define SSEWIRE_AVX2 1
#define SSEWIRE_TARGET_AVX2 __attribute__((target("avx2")))
#endif
#endif
static int ssewire_use_avx2 = 0; /* set at import by ssewire_select_simd(1) */

/* Use the AVX2 loops when asked for and the CPU has them; returns the vector level in use: 2 (AVX2),
   1 (SSE2) or 0 (plain C). */
static int ssewire_select_simd(int allow_avx2) {
#ifdef SSEWIRE_AVX2
    __builtin_cpu_init();
    ssewire_use_avx2 = allow_avx2 && __builtin_cpu_supports("avx2");
#else
    (void)allow_avx2;
    (void)ssewire_use_avx2;
#endif
#ifdef SSEWIRE_SIMD
    return ssewire_use_avx2 ? 2 : 1;
#else
    return 0;
#endif
}
/* The valid UTF-8 sequence starting at non-ASCII byte *p: its length (code point in *cp), or 0 if invalid
   or truncated (CPython's strict rules: no overlongs, no surrogates, nothing above U+10FFFF). */
static inline int ssewire_seq(const unsigned char *p, const unsigned char *end, uint32_t *cp) {
    unsigned c = p[0], c1, c2, c3;
    if (c < 0xC2)
        return 0;
    if (c < 0xE0) {
        if (end - p < 2 || (p[1] & 0xC0) != 0x80)
            return 0;
        *cp = ((c & 0x1Fu) << 6) | (p[1] & 0x3Fu);
        return 2;
    }
    if (c < 0xF0) {
        if (end - p < 3)
            return 0;
        c1 = p[1];
        c2 = p[2];
        if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80 || (c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F))
            return 0;
        *cp = ((c & 0x0Fu) << 12) | ((c1 & 0x3Fu) << 6) | (c2 & 0x3Fu);
        return 3;
    }
    if (c < 0xF5) {
        if (end - p < 4)
            return 0;
        c1 = p[1];
        c2 = p[2];
        c3 = p[3];
        if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80 || (c3 & 0xC0) != 0x80 || (c == 0xF0 && c1 < 0x90) ||
            (c == 0xF4 && c1 > 0x8F))
            return 0;
        *cp = ((c & 0x07u) << 18) | ((c1 & 0x3Fu) << 12) | ((c2 & 0x3Fu) << 6) | (c3 & 0x3Fu);
        return 4;
    }
    return 0;
}

/* Offset of the first non-ASCII byte in p[0:n] (n if none). */
static inline sw_ssize ssewire_ascii_run(const unsigned char *p, sw_ssize n) {
    sw_ssize i = 0;
#ifdef SSEWIRE_SIMD
    while (n - i >= 64) { /* 64 bytes per test while no non-ASCII byte is near */
        __m128i a = _mm_loadu_si128((const __m128i *)(p + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(p + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(p + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(p + i + 48));
        if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))))
            break;
        i += 64;
    }
    while (n - i >= 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(p + i)));
        if (m)
            return i + __builtin_ctz(m);
        i += 16;
    }
#endif
    while (i < n && p[i] < 0x80)
        i++;
    return i;
}

/* p[0:n] as UTF-8: 0 when it is not valid (CPython's strict rules, as ssewire_seq), 1 when it is all ASCII, 2 when
   it is valid and holds a character beyond ASCII. */
static inline int ssewire_utf8_check(const unsigned char *p, sw_ssize n) {
    const unsigned char *end = p + n;
    sw_ssize i = 0;
    int wide = 0, len;
    uint32_t cp;
    for (;;) {
        i += ssewire_ascii_run(p + i, n - i);
        if (i >= n)
            return wide ? 2 : 1;
        len = ssewire_seq(p + i, end, &cp);
        if (!len)
            return 0;
        wide = 1;
        i += len;
    }
}

/* The decoder's statistics of a byte, added to *maxb (largest byte) and *cont (UTF-8 continuation bytes,
   0x80-0xBF). In valid UTF-8 a string has n - continuations code points, and its widest one is set by its
   largest (lead) byte. */
#define SSEWIRE_STAT(ch, maxb, cont)     \
    do {                                 \
        if ((ch) > (maxb))               \
            (maxb) = (ch);               \
        (cont) += ((ch) & 0xC0) == 0x80; \
    } while (0)

/* The code points a code unit of `width` bytes (1, 2 or 4) holds, and the largest one a string at that width may
   stay below: CPython stores a str at the narrowest width that holds its largest code point, and one of code
   points below U+0080 only (ASCII) is a kind of its own, never filled here. */
#define SSEWIRE_WIDTH_MAX(width) ((width) == 1 ? 0xFFu : (width) == 2 ? 0xFFFFu : 0x10FFFFu)
#define SSEWIRE_WIDTH_MIN(width) ((width) == 1 ? 0x7Fu : (width) == 2 ? 0xFFu : 0xFFFFu)

/* The JSON-array element walk's state between blocks and calls. */
typedef struct {
    sw_ssize depth;    /* open braces/brackets outside strings */
    int in_str;        /* inside a string */
    int esc;           /* inside a string, right after an unescaped backslash */
    unsigned max_byte; /* decoder statistics of the bytes walked (SSEWIRE_STAT) */
    sw_ssize cont;
} ssewire_walk;

#ifdef SSEWIRE_SIMD
/* Bit i of the result: XOR of bits 0..i of x (quote bits -> "inside a string" bits). */
static inline uint64_t ssewire_prefix_xor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* One 64-byte block of the element walk, from its masks (bit i: byte i is a backslash / a quote / '{' or
   '[' / '}' or ']'), as the byte-wise walk would take it (simdjson's string masks): escapes and quotes give
   the bytes inside strings, braces/brackets outside strings move the depth. Returns 0 when the element goes
   on past the block (state updated), k > 0 when it closes at byte k - 1, or -1 (state untouched) when a
   backslash stands outside a string: invalid JSON, where the masks and the byte-wise rules could differ. */
static inline int ssewire_walk_block(uint64_t bs, uint64_t quotes, uint64_t open, uint64_t close, uint64_t *carry_str,
                                     uint64_t *carry_esc, sw_ssize *depth) {
    const uint64_t odd = 0xAAAAAAAAAAAAAAAAULL;
    uint64_t escaped = *carry_esc, next_esc = 0, in_str, s;
    sw_ssize d = *depth;
    if (bs) { /* the bytes escaped by odd runs of backslashes */
        uint64_t potential = bs & ~*carry_esc;
        uint64_t code = (((potential << 1) | odd) - potential) ^ odd;
        escaped = code ^ (bs | *carry_esc);
        next_esc = (code & bs) >> 63;
    }
    in_str = ssewire_prefix_xor(quotes & ~escaped) ^ *carry_str;
    if (bs & ~in_str)
        return -1;
    open &= ~in_str;
    close &= ~in_str;
    s = open | close;
    while (s) {
        uint64_t bit = s & (0 - s);
        if (open & bit) {
            d++;
        } else if (--d == 0) {
            *depth = 0;
            *carry_str = 0;
            *carry_esc = 0;
            return __builtin_ctzll(bit) + 1;
        }
        s &= s - 1;
    }
    *depth = d;
    *carry_str = (uint64_t)((int64_t)in_str >> 63);
    *carry_esc = next_esc;
    return 0;
}

/* --- vector kernels, written once over a small vocabulary (SW_*) and built for SSE2 and for AVX2 ---------
   A block is 64 bytes: SW_VN vectors of SW_VB bytes. SW_MASK: one bit per byte's top bit; SW_GT: signed
   byte compare; SW_COUNT: the sum of per-lane byte counters; SW_TOP: the largest byte of a vector. */

/* Per-lane counters of continuation bytes (a compare gives -1 per hit) and the running largest byte, for
   the SW_VN vectors x[]; the counters are summed into *cont before they can wrap. */
#define SW_STATS(x, vmax, counts, j, cont)                      \
    do {                                                        \
        int k_;                                                 \
        for (k_ = 0; k_ < SW_VN; k_++) {                        \
            (vmax) = SW_MAX((vmax), (x)[k_]);                   \
            (counts) = SW_SUB((counts), SW_GT(limit, (x)[k_])); \
        }                                                       \
        if (++(j) == 255 / SW_VN) {                             \
            (cont) += SW_COUNT(counts);                         \
            (counts) = zero;                                    \
            (j) = 0;                                            \
        }                                                       \
    } while (0)

/* Keep only the first `keep` bytes of the block x[] (later ones become zero, which counts for nothing). */
#define SW_KEEP(x, keep)                                                                   \
    do {                                                                                   \
        int k_;                                                                            \
        for (k_ = 0; k_ < SW_VN; k_++)                                                     \
            (x)[k_] = SW_AND((x)[k_], SW_GT(SW_SET1((char)((keep) - k_ * SW_VB)), lanes)); \
    } while (0)

/* Body of ssewire_eol_*: see ssewire_eol. */
#define SSEWIRE_EOL_BODY                                                                             \
    const SW_VEC cr = SW_SET1(0x0D), lf = SW_SET1(0x0A), zero = SW_ZERO, lanes = SW_LANES;           \
    const SW_VEC limit = SW_SET1((char)0xC0); /* as signed bytes, 0x80-0xBF are the ones below it */ \
    SW_VEC vmax = zero, counts = zero;                                                               \
    unsigned mx = 0, ch;                                                                             \
    sw_ssize c = 0;                                                                                  \
    int j = 0, k;                                                                                    \
    while (n - pos >= 64) {                                                                          \
        SW_VEC x[SW_VN];                                                                             \
        uint64_t m = 0;                                                                              \
        /* run well ahead of the scan: a long stream is read from memory once, at its bandwidth */   \
        _mm_prefetch((const char *)(p + pos + 4096), _MM_HINT_T0);                                   \
        _mm_prefetch((const char *)(p + pos + 4160), _MM_HINT_T0);                                   \
        for (k = 0; k < SW_VN; k++) {                                                                \
            x[k] = SW_LOAD(p + pos + k * SW_VB);                                                     \
            m |= SW_MASK(SW_OR(SW_EQ(x[k], cr), SW_EQ(x[k], lf))) << (k * SW_VB);                    \
        }                                                                                            \
        if (m) { /* the line ends in this block */                                                   \
            SW_KEEP(x, __builtin_ctzll(m));                                                          \
            pos += __builtin_ctzll(m);                                                               \
            n = pos; /* nothing is left for the byte loop below */                                   \
        } else {                                                                                     \
            pos += 64;                                                                               \
        }                                                                                            \
        SW_STATS(x, vmax, counts, j, c);                                                             \
    }                                                                                                \
    if (SW_MASK(vmax)) { /* any non-ASCII byte: reduce the lanes */                                  \
        c += SW_COUNT(counts);                                                                       \
        mx = SW_TOP(vmax);                                                                           \
    }                                                                                                \
    for (; pos < n; pos++) {                                                                         \
        ch = p[pos];                                                                                 \
        if (ch == 0x0D || ch == 0x0A)                                                                \
            break;                                                                                   \
        SSEWIRE_STAT(ch, mx, c);                                                                     \
    }                                                                                                \
    *maxb = mx;                                                                                      \
    *cont = c;                                                                                       \
    return pos;

/* Body of ssewire_walk64_*: see ssewire_walk64. */
#define SSEWIRE_WALK_BODY                                                                         \
    const SW_VEC quote = SW_SET1(0x22), backslash = SW_SET1(0x5C), lower = SW_SET1(0x20);         \
    const SW_VEC opening = SW_SET1(0x7B), closing = SW_SET1(0x7D); /* '{' and '}' */              \
    const SW_VEC limit = SW_SET1((char)0xC0), zero = SW_ZERO, lanes = SW_LANES;                   \
    SW_VEC vmax = zero, counts = zero;                                                            \
    uint64_t carry_str = w->in_str ? ~0ULL : 0, carry_esc = (uint64_t)w->esc;                     \
    unsigned top;                                                                                 \
    int j = 0, k, end;                                                                            \
    while (n - pos >= 64) {                                                                       \
        SW_VEC x[SW_VN], y;                                                                       \
        uint64_t bs = 0, qs = 0, open = 0, close = 0;                                             \
        for (k = 0; k < SW_VN; k++) {                                                             \
            x[k] = SW_LOAD(p + pos + k * SW_VB);                                                  \
            y = SW_OR(x[k], lower); /* '[' -> '{' and ']' -> '}'; no other byte maps onto them */ \
            bs |= SW_MASK(SW_EQ(x[k], backslash)) << (k * SW_VB);                                 \
            qs |= SW_MASK(SW_EQ(x[k], quote)) << (k * SW_VB);                                     \
            open |= SW_MASK(SW_EQ(y, opening)) << (k * SW_VB);                                    \
            close |= SW_MASK(SW_EQ(y, closing)) << (k * SW_VB);                                   \
        }                                                                                         \
        end = ssewire_walk_block(bs, qs, open, close, &carry_str, &carry_esc, &w->depth);         \
        if (end < 0)                                                                              \
            break;                                                                                \
        if (end > 0)                                                                              \
            SW_KEEP(x, end); /* the element closes: only its bytes of this block count */         \
        SW_STATS(x, vmax, counts, j, w->cont);                                                    \
        if (end > 0) {                                                                            \
            pos += end;                                                                           \
            *done = 1;                                                                            \
            break;                                                                                \
        }                                                                                         \
        pos += 64;                                                                                \
    }                                                                                             \
    w->in_str = (int)(carry_str & 1);                                                             \
    w->esc = (int)carry_esc;                                                                      \
    w->cont += SW_COUNT(counts);                                                                  \
    top = SW_TOP(vmax);                                                                           \
    if (top > w->max_byte)                                                                        \
        w->max_byte = top;                                                                        \
    return pos;

/* Body of ssewire_fill_*: see ssewire_fill. SW_VB bytes at a time while they are ASCII:
   all are stored widened, but only those before the first non-ASCII byte count (the rest is overwritten
   later; the room check keeps every store inside the string). */
#define SSEWIRE_WRITE(T, STORE)                           \
    {                                                     \
        T *o = (T *)out;                                  \
        while (p < end) {                                 \
            if (end - p >= SW_VB && chars - i >= SW_VB) { \
                SW_VEC x = SW_LOAD(p);                    \
                uint64_t m = SW_MASK(x);                  \
                STORE(o + i, x);                          \
                if (!m) {                                 \
                    p += SW_VB;                           \
                    i += SW_VB;                           \
                    continue;                             \
                }                                         \
                k = __builtin_ctzll(m);                   \
                p += k;                                   \
                i += k;                                   \
            } else if (*p < 0x80) {                       \
                if (i >= chars)                           \
                    goto invalid;                         \
                o[i++] = *p++;                            \
                continue;                                 \
            }                                             \
            k = ssewire_seq(p, end, &cp);                 \
            if (!k || i >= chars || cp > maxc)            \
                goto invalid;                             \
            if (cp > top)                                 \
                top = cp;                                 \
            o[i++] = (T)cp;                               \
            p += k;                                       \
        }                                                 \
    }
#define SSEWIRE_FILL_BODY                                         \
    const SW_VEC zero = SW_ZERO;                                  \
    sw_ssize i = 0;                                               \
    uint32_t cp = 0, top = 0, maxc = SSEWIRE_WIDTH_MAX(width);    \
    int k;                                                        \
    (void)zero;                                                   \
    switch (width) {                                              \
    case 1:                                                       \
        SSEWIRE_WRITE(uint8_t, SW_STORE1)                         \
        break;                                                    \
    case 2:                                                       \
        SSEWIRE_WRITE(uint16_t, SW_STORE2)                        \
        break;                                                    \
    default:                                                      \
        SSEWIRE_WRITE(uint32_t, SW_STORE4)                        \
    }                                                             \
    return i == chars && top > SSEWIRE_WIDTH_MIN(width) ? 0 : -1; \
    invalid:                                                      \
    return -1;

#define SSEWIRE_KERNELS(SUFFIX, ATTR)                                                                           \
    ATTR static sw_ssize ssewire_eol_##SUFFIX(const unsigned char *p, sw_ssize pos, sw_ssize n, unsigned *maxb, \
                                              sw_ssize *cont){                                                  \
        SSEWIRE_EOL_BODY} ATTR static sw_ssize ssewire_walk64_##SUFFIX(const unsigned char *p, sw_ssize pos,    \
                                                                       sw_ssize n, ssewire_walk *w, int *done){ \
        SSEWIRE_WALK_BODY} ATTR static int ssewire_fill_##SUFFIX(int width, void *out, const unsigned char *p,  \
                                                                 const unsigned char *end, sw_ssize chars) {    \
        SSEWIRE_FILL_BODY                                                                                       \
    }

/* SSE2: 16-byte vectors */
static inline sw_ssize sw_count_sse2(__m128i counts) {
    __m128i sums = _mm_sad_epu8(counts, _mm_setzero_si128());
    return _mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4);
}
static inline unsigned sw_top_sse2(__m128i v) {
    v = _mm_max_epu8(v, _mm_srli_si128(v, 8));
    v = _mm_max_epu8(v, _mm_srli_si128(v, 4));
    v = _mm_max_epu8(v, _mm_srli_si128(v, 2));
    v = _mm_max_epu8(v, _mm_srli_si128(v, 1));
    return (unsigned)_mm_cvtsi128_si32(v) & 0xFFu;
}
#define SW_VEC __m128i
#define SW_VB 16
#define SW_VN 4
#define SW_LOAD(q) _mm_loadu_si128((const __m128i *)(q))
#define SW_SET1(c) _mm_set1_epi8(c)
#define SW_ZERO _mm_setzero_si128()
#define SW_LANES _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define SW_EQ _mm_cmpeq_epi8
#define SW_OR _mm_or_si128
#define SW_AND _mm_and_si128
#define SW_MAX _mm_max_epu8
#define SW_SUB _mm_sub_epi8
#define SW_GT _mm_cmpgt_epi8
#define SW_MASK(v) ((uint64_t)(unsigned)_mm_movemask_epi8(v))
#define SW_COUNT sw_count_sse2
#define SW_TOP sw_top_sse2
#define SW_STORE1(o, x) _mm_storeu_si128((__m128i *)(o), (x))
#define SW_STORE2(o, x)                                                       \
    do {                                                                      \
        _mm_storeu_si128((__m128i *)(o), _mm_unpacklo_epi8((x), zero));       \
        _mm_storeu_si128((__m128i *)((o) + 8), _mm_unpackhi_epi8((x), zero)); \
    } while (0)
#define SW_STORE4(o, x)                                                                 \
    do {                                                                                \
        __m128i lo_ = _mm_unpacklo_epi8((x), zero), hi_ = _mm_unpackhi_epi8((x), zero); \
        _mm_storeu_si128((__m128i *)(o), _mm_unpacklo_epi16(lo_, zero));                \
        _mm_storeu_si128((__m128i *)((o) + 4), _mm_unpackhi_epi16(lo_, zero));          \
        _mm_storeu_si128((__m128i *)((o) + 8), _mm_unpacklo_epi16(hi_, zero));          \
        _mm_storeu_si128((__m128i *)((o) + 12), _mm_unpackhi_epi16(hi_, zero));         \
    } while (0)
SSEWIRE_KERNELS(sse2, )

#ifdef SSEWIRE_AVX2
/* AVX2: 32-byte vectors */
SSEWIRE_TARGET_AVX2 static inline sw_ssize sw_count_avx2(__m256i counts) {
    __m256i sums = _mm256_sad_epu8(counts, _mm256_setzero_si256());
    return _mm256_extract_epi64(sums, 0) + _mm256_extract_epi64(sums, 1) + _mm256_extract_epi64(sums, 2) +
           _mm256_extract_epi64(sums, 3);
}
SSEWIRE_TARGET_AVX2 static inline unsigned sw_top_avx2(__m256i v) {
    return sw_top_sse2(_mm_max_epu8(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}
#undef SW_VEC
#undef SW_VB
#undef SW_VN
#undef SW_LOAD
#undef SW_SET1
#undef SW_ZERO
#undef SW_LANES
#undef SW_EQ
#undef SW_OR
#undef SW_AND
#undef SW_MAX
#undef SW_SUB
#undef SW_GT
#undef SW_MASK
#undef SW_COUNT
#undef SW_TOP
#undef SW_STORE1
#undef SW_STORE2
#undef SW_STORE4
#define SW_VEC __m256i
#define SW_VB 32
#define SW_VN 2
#define SW_LOAD(q) _mm256_loadu_si256((const __m256i *)(q))
#define SW_SET1(c) _mm256_set1_epi8(c)
#define SW_ZERO _mm256_setzero_si256()
#define SW_LANES                                                                                                       \
    _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, \
                     27, 28, 29, 30, 31)
#define SW_EQ _mm256_cmpeq_epi8
#define SW_OR _mm256_or_si256
#define SW_AND _mm256_and_si256
#define SW_MAX _mm256_max_epu8
#define SW_SUB _mm256_sub_epi8
#define SW_GT _mm256_cmpgt_epi8
#define SW_MASK(v) ((uint64_t)(uint32_t)_mm256_movemask_epi8(v))
#define SW_COUNT sw_count_avx2
#define SW_TOP sw_top_avx2
#define SW_STORE1(o, x) _mm256_storeu_si256((__m256i *)(o), (x))
#define SW_STORE2(o, x)                                                                                     \
    do {                                                                                                    \
        _mm256_storeu_si256((__m256i *)(o), _mm256_cvtepu8_epi16(_mm256_castsi256_si128(x)));               \
        _mm256_storeu_si256((__m256i *)((o) + 16), _mm256_cvtepu8_epi16(_mm256_extracti128_si256((x), 1))); \
    } while (0)
#define SW_STORE4(o, x)                                                                           \
    do {                                                                                          \
        __m128i lo_ = _mm256_castsi256_si128(x), hi_ = _mm256_extracti128_si256((x), 1);          \
        _mm256_storeu_si256((__m256i *)(o), _mm256_cvtepu8_epi32(lo_));                           \
        _mm256_storeu_si256((__m256i *)((o) + 8), _mm256_cvtepu8_epi32(_mm_srli_si128(lo_, 8)));  \
        _mm256_storeu_si256((__m256i *)((o) + 16), _mm256_cvtepu8_epi32(hi_));                    \
        _mm256_storeu_si256((__m256i *)((o) + 24), _mm256_cvtepu8_epi32(_mm_srli_si128(hi_, 8))); \
    } while (0)
SSEWIRE_KERNELS(avx2, SSEWIRE_TARGET_AVX2)
#endif /* SSEWIRE_AVX2 */
#endif /* SSEWIRE_SIMD */

/* Offset of the first CR or LF in p[pos:n] (n if none), both found in one pass, which also takes the
   decoder's statistics of the line: its largest byte (*maxb: exact when the line holds a byte of 0x80 or more;
   for an ASCII line, some value below 0x80) and its UTF-8 continuation bytes (*cont). */
static inline sw_ssize ssewire_eol(const char *s, sw_ssize pos, sw_ssize n, unsigned *maxb, sw_ssize *cont) {
    const unsigned char *p = (const unsigned char *)s;
    unsigned mx = 0, ch;
    sw_ssize c = 0;
#ifdef SSEWIRE_AVX2
    if (ssewire_use_avx2)
        return ssewire_eol_avx2(p, pos, n, maxb, cont);
#endif
#ifdef SSEWIRE_SIMD
    return ssewire_eol_sse2(p, pos, n, maxb, cont);
#endif
    for (; pos < n; pos++) {
        ch = p[pos];
        if (ch == 0x0D || ch == 0x0A)
            break;
        SSEWIRE_STAT(ch, mx, c);
    }
    *maxb = mx;
    *cont = c;
    return pos;
}

/* Walk a JSON-array element 64 bytes at a time (ssewire_walk_block). Returns the offset reached: just past
   the element's closing byte (*done set), or the start of the first block not taken (fewer than 64 bytes
   left, or a backslash outside a string: the byte-wise walk takes it). The decoder statistics of every byte
   walked are added to w. Without vector instructions nothing is walked here. */
static sw_ssize ssewire_walk64(const unsigned char *p, sw_ssize pos, sw_ssize n, ssewire_walk *w, int *done) {
#ifdef SSEWIRE_AVX2
    if (ssewire_use_avx2)
        return ssewire_walk64_avx2(p, pos, n, w, done);
#endif
#ifdef SSEWIRE_SIMD
    return ssewire_walk64_sse2(p, pos, n, w, done);
#else
    (void)p;
    (void)n;
    (void)w;
    (void)done;
    return pos;
#endif
}

/* The statistics of p[0:n] (SSEWIRE_STAT): its largest byte, its continuation bytes in *continuations. */
static inline unsigned ssewire_byte_stats(const unsigned char *p, sw_ssize n, sw_ssize *continuations) {
    sw_ssize i = 0, cont = 0;
    unsigned maxb = 0;
#ifdef SSEWIRE_SIMD
    const __m128i limit = _mm_set1_epi8((char)0xC0), zero = _mm_setzero_si128();
    __m128i vmax = zero, counts = zero;
    int j = 0;
    for (; n - i >= 16; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + i));
        vmax = _mm_max_epu8(vmax, x);
        counts = _mm_sub_epi8(counts, _mm_cmpgt_epi8(limit, x)); /* a compare gives -1 per hit */
        if (++j == 255) {
            cont += sw_count_sse2(counts);
            counts = zero;
            j = 0;
        }
    }
    cont += sw_count_sse2(counts);
    maxb = sw_top_sse2(vmax);
#endif
    for (; i < n; i++)
        SSEWIRE_STAT(p[i], maxb, cont);
    *continuations = cont;
    return maxb;
}

/* The code points of the UTF-8 p[0:end] as `chars` code units of `width` bytes (1, 2 or 4) at out, the
   canonical width for them (SSEWIRE_WIDTH_MAX/MIN; ASCII is not filled). 0, or -1 when the bytes are not valid UTF-8
   (CPython's strict rules, ssewire_seq) of exactly `chars` code points, or another width is canonical for them:
   whatever statistics chose chars and width, only a canonical result is ever kept. out has room for chars
   units; everything past the units written may be overwritten. */
static int ssewire_fill(int width, void *out, const unsigned char *p, const unsigned char *end, sw_ssize chars) {
#ifdef SSEWIRE_AVX2
    if (ssewire_use_avx2)
        return ssewire_fill_avx2(width, out, p, end, chars);
#endif
#ifdef SSEWIRE_SIMD
    return ssewire_fill_sse2(width, out, p, end, chars);
#else
    sw_ssize i = 0;
    uint32_t cp = 0, top = 0, maxc = SSEWIRE_WIDTH_MAX(width);
    int k;
    while (p < end) {
        if (*p < 0x80) {
            cp = *p;
            k = 1;
        } else {
            k = ssewire_seq(p, end, &cp);
            if (!k || cp > maxc)
                return -1;
        }
        if (i >= chars)
            return -1;
        if (cp > top)
            top = cp;
        if (width == 1)
            ((uint8_t *)out)[i] = (uint8_t)cp;
        else if (width == 2)
            ((uint16_t *)out)[i] = (uint16_t)cp;
        else
            ((uint32_t *)out)[i] = cp;
        i++;
        p += k;
    }
    return i == chars && top > SSEWIRE_WIDTH_MIN(width) ? 0 : -1;
#endif
}

#endif /* SSEWIRE_KERNELS_H */
