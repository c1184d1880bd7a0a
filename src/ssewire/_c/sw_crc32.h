/* CRC-32 (ISO-HDLC, the zlib/PNG polynomial), as the AWS event-stream framing checks it: table-driven,
 * eight bytes per step ("slicing-by-8"), byte order independent; on x86-64 CPUs with PCLMULQDQ and SSE4.1,
 * runs of 64 bytes or more are folded with carry-less multiplies (Gopal et al., "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ Instruction", Intel 2009), chosen at run time. Included by
 * _scanner_c.pyx through _kernels.pxd; ssewire_crc32_init() fills the tables and picks the path once, at import. */
#ifndef SSEWIRE_CRC32_H
#define SSEWIRE_CRC32_H

#include <stddef.h>
#include <stdint.h>

static uint32_t ssewire_crc_table[8][256];

#if defined(__x86_64__) && defined(__GNUC__) && !defined(SSEWIRE_NO_CLMUL)
#include <immintrin.h>
#define SSEWIRE_CLMUL 1
static int ssewire_use_clmul = 0;

/* The folded CRC of p[0:n] (n >= 64, a multiple of 16), from and to the bit-inverted state. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t ssewire_crc32_clmul(const unsigned char *p, size_t n,
                                                                             uint32_t crc) {
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 0x00));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 0x10));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 0x20));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(p + 0x30));
    __m128i x0, x5;
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    p += 64;
    n -= 64;
    while (n >= 64) { /* four lanes folded 64 bytes ahead */
        __m128i x6, x7, x8;
        x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
        x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
        x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
        x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
        x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
        x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
        x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
        x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(p + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(p + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(p + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(p + 0x30)));
        p += 64;
        n -= 64;
    }
    /* the four lanes into one */
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x2), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x3), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x4), x5);
    while (n >= 16) { /* the remaining 16-byte blocks */
        x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
        x1 =
            _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), _mm_loadu_si128((const __m128i *)p)), x5);
        p += 16;
        n -= 16;
    }
    /* 128 bits to 64 */
    x0 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x0);
    x0 = _mm_srli_si128(x1, 4);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), k5k0, 0x00), x0);
    /* Barrett reduction to 32 bits */
    x0 = _mm_clmulepi64_si128(_mm_and_si128(x1, low32), poly, 0x10);
    x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, low32), poly, 0x00);
    x1 = _mm_xor_si128(x1, x0);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

/* Use the carry-less multiply path when allowed and the CPU has it (tests switch it off); returns whether it is
   in use. */
static int ssewire_crc32_select(int allow_clmul) {
#ifdef SSEWIRE_CLMUL
    __builtin_cpu_init();
    ssewire_use_clmul = allow_clmul && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    return ssewire_use_clmul;
#else
    (void)allow_clmul;
    return 0;
#endif
}

static void ssewire_crc32_init(void) {
    uint32_t i, c;
    int k, t;
    for (i = 0; i < 256; i++) {
        c = i;
        for (k = 0; k < 8; k++)
            c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        ssewire_crc_table[0][i] = c;
    }
    for (i = 0; i < 256; i++)
        for (t = 1; t < 8; t++)
            ssewire_crc_table[t][i] =
                (ssewire_crc_table[t - 1][i] >> 8) ^ ssewire_crc_table[0][ssewire_crc_table[t - 1][i] & 0xFFu];
    ssewire_crc32_select(1);
}

/* The CRC-32 of p[0:n], continuing `crc` (0 to start): what zlib.crc32(p[0:n], crc) returns. */
static uint32_t ssewire_crc32(uint32_t crc, const unsigned char *p, size_t n) {
    const uint32_t (*T)[256] = (const uint32_t (*)[256])ssewire_crc_table;
    crc = ~crc;
#ifdef SSEWIRE_CLMUL
    if (ssewire_use_clmul && n >= 64) {
        size_t folded = n & ~(size_t)15;
        crc = ssewire_crc32_clmul(p, folded, crc);
        p += folded;
        n -= folded;
    }
#endif
    while (n >= 8) {
        uint32_t lo = ((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24)) ^ crc;
        uint32_t hi = (uint32_t)p[4] | ((uint32_t)p[5] << 8) | ((uint32_t)p[6] << 16) | ((uint32_t)p[7] << 24);
        crc = T[7][lo & 0xFFu] ^ T[6][(lo >> 8) & 0xFFu] ^ T[5][(lo >> 16) & 0xFFu] ^ T[4][lo >> 24] ^
              T[3][hi & 0xFFu] ^ T[2][(hi >> 8) & 0xFFu] ^ T[1][(hi >> 16) & 0xFFu] ^ T[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = T[0][(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

#endif /* SSEWIRE_CRC32_H */
