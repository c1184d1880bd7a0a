/* CRC-32 (ISO-HDLC, the zlib/PNG polynomial), as the AWS event-stream framing checks it: table-driven,
 * eight bytes per step ("slicing-by-8"), byte order independent. Included by _scanner_c.pyx through
 * _kernels.pxd; ssewire_crc32_init() fills the tables once, at import. */
#ifndef SSEWIRE_CRC32_H
#define SSEWIRE_CRC32_H

#include <stddef.h>
#include <stdint.h>

static uint32_t ssewire_crc_table[8][256];

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
}

/* The CRC-32 of p[0:n], continuing `crc` (0 to start): what zlib.crc32(p[0:n], crc) returns. */
static uint32_t ssewire_crc32(uint32_t crc, const unsigned char *p, size_t n) {
    const uint32_t (*T)[256] = (const uint32_t (*)[256])ssewire_crc_table;
    crc = ~crc;
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
