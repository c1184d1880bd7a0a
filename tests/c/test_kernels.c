/* The compiled scanners' pure C kernels tested as C, without Python (the headers include no Python.h): CRC-32 (table
 * and carry-less multiply paths) against a bitwise reference; UTF-8 validation exhaustively against a range-based
 * reference, the UTF-8 transcoder at each width, the byte statistics, the line-end scan and the JSON element walk
 * (vector and byte loops) against byte-by-byte ones; the strict JSON locator, the unescaper and the compact writer
 * on documents whose answers are known. .ci/run builds it with and without SSE2 and runs it.
 *
 *     gcc -O2 -std=c99 -Wall -Wextra -Werror -Wno-unused-function -Isrc/ssewire tests/c/test_kernels.c \
 *         -o test_kernels && ./test_kernels
 *
 * Exit status 0 when every check holds; each failure is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sw_kernels.h first, as kernels.pxd includes it: sw_crc32.h includes <immintrin.h>, whose target pragmas define
   __SSE2__ for what follows, so a -U__SSE2__ build would get the vector loops after it. */
#include "_c/sw_kernels.h"
#include "_c/sw_crc32.h"
#include "_c/sw_json.h"

static int failures = 0;

#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            failures++;                                                \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                              \
            fputc('\n', stderr);                                       \
        }                                                              \
    } while (0)

static uint64_t rng = 88172645463325252ULL;
static unsigned next_byte(void) { /* xorshift64: the same bytes on every run */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng & 0xFFu);
}

static uint32_t crc_bitwise(uint32_t crc, const unsigned char *p, size_t n) {
    size_t i;
    int k;
    crc = ~crc;
    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (k = 0; k < 8; k++)
            crc = (crc & 1u) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
    }
    return ~crc;
}

static void test_crc32(void) {
    static unsigned char buf[70000];
    size_t n, cut;
    int clmul;
    for (n = 0; n < sizeof buf; n++)
        buf[n] = (unsigned char)next_byte();
    ssewire_crc32_init();
    for (clmul = 0; clmul <= 1; clmul++) {
        int on = ssewire_crc32_select(clmul);
        CHECK(ssewire_crc32(0, (const unsigned char *)"123456789", 9) == 0xCBF43926u, "check value, clmul %d", on);
        for (n = 0; n <= 300; n++)
            CHECK(ssewire_crc32(0, buf, n) == crc_bitwise(0, buf, n), "length %zu, clmul %d", n, on);
        for (n = 1000; n <= sizeof buf; n += 7919)
            CHECK(ssewire_crc32(0, buf, n) == crc_bitwise(0, buf, n), "length %zu, clmul %d", n, on);
        for (cut = 0; cut <= 200; cut += 13) /* continuing a CRC is the CRC of the whole */
            CHECK(ssewire_crc32(ssewire_crc32(0, buf, cut), buf + cut, 500 - cut) == crc_bitwise(0, buf, 500),
                  "continued at %zu, clmul %d", cut, on);
    }
}

/* What ssewire_eol must find: the first CR or LF at or after pos, the largest byte before it (for a line with a
   non-ASCII byte; an ASCII line may report any value below 0x80), its continuation bytes (0x80-0xBF). */
static sw_ssize eol_bytewise(const unsigned char *p, sw_ssize pos, sw_ssize n, unsigned *maxb, sw_ssize *cont) {
    unsigned mx = 0;
    sw_ssize c = 0;
    for (; pos < n && p[pos] != 0x0D && p[pos] != 0x0A; pos++) {
        if (p[pos] > mx)
            mx = p[pos];
        if (p[pos] >= 0x80 && p[pos] <= 0xBF)
            c++;
    }
    *maxb = mx;
    *cont = c;
    return pos;
}

static void test_line_ends(void) {
    static unsigned char buf[4096];
    int level, round;
    for (level = 0; level <= 1; level++) {
        int simd = ssewire_select_simd(level);
        for (round = 0; round < 4000; round++) {
            sw_ssize n = (sw_ssize)(next_byte() * 16 + next_byte() % 16), pos = next_byte() % 70, i, want, got;
            unsigned kind = next_byte() % 4, mx_want, mx_got;
            sw_ssize c_want, c_got;
            for (i = 0; i < n; i++) { /* ASCII, UTF-8-ish bytes, or sparse line ends */
                unsigned b = next_byte();
                buf[i] = (unsigned char)(kind == 0 ? 0x20 + b % 90 : kind == 1 ? b : b % 200 == 0 ? 0x0A : 0x61);
            }
            if (pos > n)
                pos = n;
            want = eol_bytewise(buf, pos, n, &mx_want, &c_want);
            got = ssewire_eol((const char *)buf, pos, n, &mx_got, &c_got);
            CHECK(got == want && (mx_want < 0x80 ? mx_got < 0x80 : mx_got == mx_want) && c_got == c_want,
                  "level %d, n %lld, pos %lld: end %lld/%lld, max %u/%u, continuations %lld/%lld", simd, (long long)n,
                  (long long)pos, (long long)got, (long long)want, mx_got, mx_want, (long long)c_got,
                  (long long)c_want);
        }
    }
}

/* Locate the value at one path of up to two keys; returns sw_json_locate's answer, the value in *v. */
static int locate(const char *text, const char *key1, const char *key2, sw_json_val *v) {
    sw_json_paths paths;
    sw_json_val vals[SW_JSON_MAX_PATHS];
    int ok;
    memset(&paths, 0, sizeof paths);
    paths.n = 1;
    paths.steps[0] = key2 ? 2 : 1;
    paths.key[0][0] = key1;
    paths.len[0][0] = (sw_ssize)strlen(key1);
    if (key2) {
        paths.key[0][1] = key2;
        paths.len[0][1] = key2[0] == '\0' ? SW_JSON_ONLY : (sw_ssize)strlen(key2);
    }
    sw_json_prepare(&paths);
    memset(vals, 0, sizeof vals);
    ok = sw_json_locate(text, (sw_ssize)strlen(text), &paths, vals);
    *v = vals[0];
    return ok;
}

/* sw_json_locate with one path of one key, vetoed: 1 where it is there at all, 2 where it has a value but null. */
static int locate_vetoed(const char *text, const char *key, int veto, sw_json_val *v) {
    sw_json_paths paths;
    sw_json_val vals[SW_JSON_MAX_PATHS];
    int ok;
    memset(&paths, 0, sizeof paths);
    paths.n = 1;
    paths.steps[0] = 1;
    paths.key[0][0] = key;
    paths.len[0][0] = (sw_ssize)strlen(key);
    sw_json_prepare(&paths);
    CHECK(paths.veto_present == 0 && paths.veto_value == 0, "sw_json_prepare clears the vetoes");
    if (veto == 1)
        paths.veto_present = 1u;
    else
        paths.veto_value = 1u;
    memset(vals, 0, sizeof vals);
    ok = sw_json_locate(text, (sw_ssize)strlen(text), &paths, vals);
    *v = vals[0];
    return ok;
}

/* sw_json_locate_each with one path "a", each element, "t" (the array of "a" read element by element): its answer,
 * element `element`'s value in *v (element 0's in vals, the next ones' in each_vals) and the element count. */
static int locate_each(const char *text, int element, int *count, sw_json_val *v) {
    sw_json_paths paths;
    sw_json_val vals[SW_JSON_MAX_PATHS], each_vals[(SW_JSON_MAX_EACH - 1) * SW_JSON_MAX_PATHS];
    int ok;
    memset(&paths, 0, sizeof paths);
    paths.n = 1;
    paths.steps[0] = 3;
    paths.key[0][0] = "a";
    paths.len[0][0] = 1;
    paths.len[0][1] = SW_JSON_ONLY;
    paths.key[0][2] = "t";
    paths.len[0][2] = 1;
    paths.each_depth = 1;
    sw_json_prepare(&paths);
    CHECK(paths.through_each == 1u, "sw_json_prepare finds the paths through the each step");
    ok = sw_json_locate_each(text, (sw_ssize)strlen(text), &paths, vals, each_vals, count);
    *v = element == 0 ? vals[0] : each_vals[(element - 1) * SW_JSON_MAX_PATHS];
    return ok;
}

static int text_is(const sw_json_val *v, const char *want) {
    return v->start != NULL && v->len == (sw_ssize)strlen(want) && memcmp(v->start, want, (size_t)v->len) == 0;
}

static void test_json_locate(void) {
    sw_json_val v;
    CHECK(locate("{\"type\":\"delta\",\"text\":\"hi\"}", "text", NULL, &v) == 1 && v.kind == SW_J_STRING &&
              text_is(&v, "hi") && !v.escaped,
          "a string member");
    CHECK(locate("{\"a\":{\"b\":-12}}", "a", "b", &v) == 1 && v.kind == SW_J_INT && text_is(&v, "-12"), "nested int");
    CHECK(locate("{\"a\":[{\"x\":1}]}", "a", "", &v) == 1 && v.kind == SW_J_OBJECT, "the only element of an array");
    CHECK(locate("{\"a\":[1,2]}", "a", "", &v) == 0, "two elements where the path wants the only one");
    CHECK(locate("{\"t\":\"a\\nb\"}", "t", NULL, &v) == 1 && v.kind == SW_J_STRING && v.escaped, "an escaped string");
    CHECK(locate("{\"t\":1,\"t\":null}", "t", NULL, &v) == 1 && v.kind == SW_J_NULL, "the last duplicate key counts");
    CHECK(locate("{\"u\":true}", "t", NULL, &v) == 1 && v.kind == SW_J_ABSENT, "an absent member");
    CHECK(locate("{\"t\":NaN}", "t", NULL, &v) == 0, "NaN is not strict JSON");
    CHECK(locate("{\"t\":1,}", "t", NULL, &v) == 0, "a trailing comma");
    CHECK(locate("[1]", "t", NULL, &v) == 0, "not an object");
    CHECK(locate("{\"t\":\"a\tb\"}", "t", NULL, &v) == 0, "a control character in a string");
    CHECK(locate("{\"t\":1} x", "t", NULL, &v) == 0, "text after the value");
    {
        static char deep[2 * SW_JSON_MAX_DEPTH + 64];
        int i, k = 0;
        k += sprintf(deep + k, "{\"t\":");
        for (i = 0; i < SW_JSON_MAX_DEPTH + 1; i++)
            deep[k++] = '[';
        for (i = 0; i < SW_JSON_MAX_DEPTH + 1; i++)
            deep[k++] = ']';
        deep[k++] = '}';
        deep[k] = '\0';
        CHECK(locate(deep, "t", NULL, &v) == 0, "nesting past SW_JSON_MAX_DEPTH");
    }
    CHECK(locate_vetoed("{\"a\":1,\"t\":{\"x\":1}}", "t", 1, &v) == 0, "a member vetoed when there: there");
    CHECK(locate_vetoed("{\"a\":1,\"t\":null}", "t", 1, &v) == 0, "a member vetoed when there: null");
    CHECK(locate_vetoed("{\"a\":1}", "t", 1, &v) == 1 && v.kind == SW_J_ABSENT, "a member vetoed when there: absent");
    CHECK(locate_vetoed("{\"t\":null,\"a\":1}", "t", 2, &v) == 1 && v.kind == SW_J_NULL, "a value vetoed: null");
    CHECK(locate_vetoed("{\"t\":\"x\"}", "t", 2, &v) == 0, "a value vetoed: a string");
    CHECK(locate_vetoed("{\"t\":{}}", "t", 2, &v) == 0, "a value vetoed: an object");
    CHECK(locate_vetoed("{\"a\":[]}", "t", 2, &v) == 1 && v.kind == SW_J_ABSENT, "a value vetoed: absent");
    CHECK(locate_vetoed("{\"t\":nul}", "t", 2, &v) == 0, "a value vetoed: not JSON after all");
}

static void test_json_locate_element(void) {
    sw_json_val v;
    int count = -1, i, k;
    char many[512];
    const char *three = "{\"a\":[{\"t\":\"x\"},{\"t\":\"yy\"},{\"u\":1}],\"b\":2}";
    CHECK(locate_each(three, 0, &count, &v) == 1 && count == 3 && text_is(&v, "x"), "element 0 of 3");
    CHECK(locate_each(three, 1, &count, &v) == 1 && count == 3 && text_is(&v, "yy"), "element 1 of 3");
    CHECK(locate_each(three, 2, &count, &v) == 1 && count == 3 && v.kind == SW_J_ABSENT, "element 2: no t");
    CHECK(locate_each("{\"a\":[{\"t\":1},\"s\"]}", 1, &count, &v) == 1 && count == 2 && v.kind == SW_J_ABSENT,
          "an element that is no object: absent");
    CHECK(locate_each("{\"a\":[{\"t\":1}]}", 0, &count, &v) == 1 && count == 1 && v.kind == SW_J_INT, "one element");
    CHECK(locate_each("{\"a\":[]}", 0, &count, &v) == 1 && count == 0 && v.kind == SW_J_ABSENT, "no element");
    CHECK(locate_each("{\"a\":7}", 0, &count, &v) == 1 && count == 0 && v.kind == SW_J_ABSENT, "not an array");
    CHECK(locate_each("{\"a\":[{\"t\":1},{\"t\":2}],\"a\":\"s\"}", 0, &count, &v) == 1 && count == 0 &&
              v.kind == SW_J_ABSENT,
          "a repeated key: the last one's elements are counted");
    CHECK(locate_each("{\"a\":[{\"t\":1},{\"t\":2},],\"b\":2}", 0, &count, &v) == 0,
          "every element is validated (a trailing comma)");
    CHECK(locate_each("{\"a\":[{\"t\":1},{\"t\":NaN}]}", 0, &count, &v) == 0, "an element's NaN");
    k = sprintf(many, "{\"a\":[");
    for (i = 0; i < SW_JSON_MAX_EACH + 2; i++)
        k += sprintf(many + k, "%s{\"t\":%d}", i ? "," : "", i);
    sprintf(many + k, "]}");
    CHECK(locate_each(many, SW_JSON_MAX_EACH - 1, &count, &v) == 1 && count == SW_JSON_MAX_EACH + 2 &&
              v.kind == SW_J_INT && v.start[0] == '0' + SW_JSON_MAX_EACH - 1,
          "the last element read of more than SW_JSON_MAX_EACH, every one counted");
    k = sprintf(many, "{\"a\":[");
    for (i = 0; i < SW_JSON_MAX_EACH; i++)
        k += sprintf(many + k, "{\"t\":%d},", i);
    sprintf(many + k, "{\"t\":tru}]}");
    CHECK(locate_each(many, 0, &count, &v) == 0, "an element past those read is validated");
    CHECK(locate("{\"a\":[1,2]}", "a", "", &v) == 0, "sw_json_locate still wants the one element");
}

/* The reference for ssewire_seq, stated by ranges rather than by lead bytes: decode by the length the lead byte
   claims, then accept only the shortest form of a scalar value (no surrogates, nothing above U+10FFFF). */
static int seq_reference(const unsigned char *p, sw_ssize avail, uint32_t *cp) {
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    int len = p[0] >= 0xF0 && p[0] < 0xF8 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC0 ? 2 : 0, k;
    uint32_t v;
    if (p[0] >= 0xF8 || !len || avail < len)
        return 0;
    v = p[0] & (0x7Fu >> len);
    for (k = 1; k < len; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[k] & 0x3Fu);
    }
    if (v < least[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

static void test_utf8_seq(void) {
    static const unsigned char last[] = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0xBF, 0xC0, 0xFF};
    unsigned char b[4];
    unsigned c0, c1, c2, i;
    sw_ssize avail;
    for (c0 = 0x80; c0 <= 0xFF; c0++) /* every lead and next two bytes, a few fourth ones, every truncation */
        for (c1 = 0; c1 <= 0xFF; c1++)
            for (c2 = 0; c2 <= 0xFF; c2++)
                for (i = 0; i < sizeof last; i++)
                    for (avail = 1; avail <= 4; avail++) {
                        uint32_t want = 0, got = 0;
                        int n_want, n_got;
                        b[0] = (unsigned char)c0;
                        b[1] = (unsigned char)c1;
                        b[2] = (unsigned char)c2;
                        b[3] = last[i];
                        n_want = seq_reference(b, avail, &want);
                        n_got = ssewire_seq(b, b + avail, &got);
                        if (n_got != n_want || (n_want && got != want)) {
                            CHECK(0, "%02X %02X %02X %02X (%lld bytes): length %d/%d, code point %X/%X", c0, c1, c2,
                                  last[i], (long long)avail, n_got, n_want, (unsigned)got, (unsigned)want);
                            return;
                        }
                    }
}

static int utf8_encode(uint32_t cp, unsigned char *o) {
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

static void test_utf8_of_str(void) {
    /* characters of each kind's range, ASCII runs of every length around the 4- and 2-character steps */
    static const uint32_t pool[] = {'a',   '"',   0x7F,   0x80,   0xE9,    0xFF,    0x100,
                                    0x7FF, 0x800, 0x6771, 0xFFFF, 0x10000, 0x1F642, 0x10FFFF};
    uint8_t s1[64];
    uint16_t s2[64];
    uint32_t s4[64];
    unsigned char got[256], want[256];
    int kind, n, i, trial, wlen, top;
    unsigned seed = 12345;
    for (trial = 0; trial < 20000; trial++) {
        kind = trial % 3 == 0 ? 1 : trial % 3 == 1 ? 2 : 4;
        top = kind == 1 ? 6 : kind == 2 ? 11 : 14; /* the characters the kind holds */
        n = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 40;
        wlen = 0;
        for (i = 0; i < n; i++) {
            unsigned r = (seed = seed * 1103515245u + 12345u) >> 16;
            uint32_t c = r % 3 ? 'a' + r % 26 : pool[r % (unsigned)top];
            s1[i] = (uint8_t)c;
            s2[i] = (uint16_t)c;
            s4[i] = c;
            wlen += utf8_encode(c, want + wlen);
        }
        CHECK(sw_json_utf8_of(kind,
                              kind == 1   ? (const void *)s1
                              : kind == 2 ? (const void *)s2
                                          : (const void *)s4,
                              n, (char *)got) == wlen &&
                  memcmp(got, want, (size_t)wlen) == 0 && wlen <= sw_json_utf8_room(kind, n),
              "kind %d, %d characters: the UTF-8 of each", kind, n);
    }
    s2[0] = 'a';
    s2[1] = 0xD800;
    CHECK(sw_json_utf8_of(2, s2, 2, (char *)got) == -1, "a lone surrogate (2 bytes a character)");
    s4[0] = 0xDFFF;
    CHECK(sw_json_utf8_of(4, s4, 1, (char *)got) == -1, "a lone surrogate (4 bytes a character)");
}

/* A random scalar value below `top`, mostly ASCII (long ASCII runs take the vector stores). */
static uint32_t random_cp(uint32_t top) {
    uint32_t cp;
    do {
        cp = next_byte() < 200 ? 0x20 + next_byte() % 90
                               : ((uint32_t)next_byte() << 16 | (uint32_t)next_byte() << 8 | next_byte()) % top;
    } while (cp >= 0xD800 && cp <= 0xDFFF);
    return cp;
}

static int units_equal(const void *out, int width, const uint32_t *cps, sw_ssize n) {
    sw_ssize i;
    for (i = 0; i < n; i++) {
        uint32_t u = width == 1   ? ((const uint8_t *)out)[i]
                     : width == 2 ? ((const uint16_t *)out)[i]
                                  : ((const uint32_t *)out)[i];
        if (u != cps[i])
            return 0;
    }
    return 1;
}

/* ssewire_fill writes the code points at the canonical width, and refuses everything else: another width, another
   count, invalid UTF-8. */
static void test_utf8_fill(void) {
    static const uint32_t tops[3] = {0x100, 0x10000, 0x110000}; /* each width's code points */
    static const uint32_t needs[3] = {0x80, 0x100, 0x10000};    /* the least code point that needs each width */
    static uint32_t cps[600], out[600];
    static unsigned char text[2400];
    int level, round, w, other;
    for (level = 0; level <= 1; level++) {
        int simd = ssewire_select_simd(level);
        for (round = 0; round < 3000; round++) {
            sw_ssize n = next_byte() * 2 + 1, len = 0, i;
            int widths[3] = {1, 2, 4};
            w = next_byte() % 3;
            for (i = 0; i < n; i++)
                cps[i] = random_cp(tops[w]);
            cps[n / 2] = needs[w] + next_byte() % 0x80; /* one code point that needs this width */
            for (i = 0; i < n; i++)
                len += utf8_encode(cps[i], text + len);
            CHECK(ssewire_fill(widths[w], out, text, text + len, n) == 0 && units_equal(out, widths[w], cps, n),
                  "level %d, width %d, %lld code points", simd, widths[w], (long long)n);
            for (other = 0; other < 3; other++)
                if (other != w)
                    CHECK(ssewire_fill(widths[other], out, text, text + len, n) == -1,
                          "level %d: width %d refused for a width-%d text", simd, widths[other], widths[w]);
            CHECK(ssewire_fill(widths[w], out, text, text + len, n - 1) == -1, "level %d: one unit short", simd);
            if (n > 1) /* the room for n units, but one code point fewer in the text */
                CHECK(ssewire_fill(widths[w], out, text, text + len - utf8_encode(cps[n - 1], text + len), n) == -1,
                      "level %d: one code point missing", simd);
            i = next_byte() % len;
            text[i] = 0xFF; /* never valid in UTF-8 */
            CHECK(ssewire_fill(4, out, text, text + len, n) == -1, "level %d: invalid byte at %lld", simd,
                  (long long)i);
        }
    }
}

/* ssewire_utf8_check: 1 for ASCII, 2 for valid text beyond it, 0 for any text with an invalid sequence (a byte
   replaced, or the text cut inside its last sequence), at each vector level. */
static void test_utf8_check(void) {
    static unsigned char text[2400];
    int level, round;
    for (level = 0; level <= 1; level++) {
        int simd = ssewire_select_simd(level);
        for (round = 0; round < 3000; round++) {
            sw_ssize n = next_byte() * 2 + 1, len = 0, i, last = 0;
            uint32_t top = next_byte() % 4 == 0 ? 0x80 : 0x110000, cp = 0;
            int wide = 0;
            for (i = 0; i < n; i++) {
                cp = random_cp(top);
                wide |= cp >= 0x80;
                last = len;
                len += utf8_encode(cp, text + len);
            }
            CHECK(ssewire_utf8_check(text, len) == (wide ? 2 : 1), "level %d, %lld bytes", simd, (long long)len);
            if (len - last > 1)
                CHECK(ssewire_utf8_check(text, len - 1) == 0, "level %d: cut inside its last sequence", simd);
            i = next_byte() % len;
            text[i] = next_byte() % 2 ? 0xFF : 0x80; /* never valid there: a 0xFF, or a continuation without lead */
            if (text[i] == 0xFF || i == 0 || text[i - 1] < 0x80)
                CHECK(ssewire_utf8_check(text, len) == 0, "level %d: invalid byte at %lld", simd, (long long)i);
        }
    }
    CHECK(ssewire_utf8_check((const unsigned char *)"", 0) == 1, "empty text");
}

/* ssewire_ascii_run and ssewire_byte_stats against byte loops. */
static void test_byte_stats(void) {
    static unsigned char buf[3000];
    int level, round;
    for (level = 0; level <= 1; level++) {
        int simd = ssewire_select_simd(level);
        for (round = 0; round < 3000; round++) {
            sw_ssize n = (sw_ssize)(next_byte() * 11 + next_byte() % 11), i, run = -1, cont = 0, got_cont;
            unsigned mx = 0, at = next_byte() % 4 == 0 ? (unsigned)-1 : next_byte() * 11u;
            for (i = 0; i < n; i++) { /* ASCII with, maybe, one other byte */
                buf[i] = (unsigned char)((sw_ssize)at == i ? 0x80 | next_byte() : next_byte() & 0x7F);
                if (buf[i] >= 0x80 && run < 0)
                    run = i;
                if (buf[i] > mx)
                    mx = buf[i];
                cont += buf[i] >= 0x80 && buf[i] <= 0xBF;
            }
            CHECK(ssewire_ascii_run(buf, n) == (run < 0 ? n : run), "level %d, n %lld: ASCII run", simd, (long long)n);
            CHECK(ssewire_byte_stats(buf, n, &got_cont) == mx && got_cont == cont, "level %d, n %lld: statistics", simd,
                  (long long)n);
        }
    }
}

/* A random JSON-array element: an object of members whose string values hold braces, quotes and backslash escapes. */
static sw_ssize random_element(char *o, sw_ssize room) {
    static const char *pieces[] = {
        "\"a\":1",     "\"b\":\"{[\"",       "\"c\":\"\\\"}\"",  "\"d\":\"\\\\\"",     "\"e\":[1,{}]",
        "\"f\":\"x\"", "\"g\":\"\xC3\xA9\"", "\"h\":{\"i\":[]}", "\"j\":\"\\\\\\\"]\""};
    sw_ssize n = 0;
    int depth = 0;
    o[n++] = '{';
    while (n < room - 40) {
        unsigned pick = next_byte() % 12;
        if (pick < 9) {
            size_t len = strlen(pieces[pick]);
            if (o[n - 1] != '{')
                o[n++] = ',';
            memcpy(o + n, pieces[pick], len);
            n += (sw_ssize)len;
        } else if (pick == 9 && depth < 8) {
            if (o[n - 1] != '{')
                o[n++] = ',';
            memcpy(o + n, "\"k\":{", 5);
            n += 5;
            depth++;
        } else if (depth > 0) {
            o[n++] = '}';
            depth--;
        } else {
            break;
        }
    }
    while (depth-- > 0)
        o[n++] = '}';
    o[n++] = '}';
    return n;
}

/* ssewire_walk64 against a byte-wise walk: it stops just past the element's closing brace, or at a block boundary
   with the byte-wise state and statistics of the bytes before it. */
static void test_element_walk(void) {
    static char text[4096];
    int level, round;
    for (level = 0; level <= 1; level++) {
        int simd = ssewire_select_simd(level);
        for (round = 0; round < 2000; round++) {
            sw_ssize room = 64 + next_byte() * 12, n = random_element(text, room), end = -1, i, got, cont = 0;
            sw_ssize depth = 0, at_depth = 0, at_cont = 0;
            unsigned mx = 0, at_mx = 0;
            int in_str = 0, esc = 0, at_str = 0, at_esc = 0, done = 0;
            ssewire_walk w = {0, 0, 0, 0, 0};
            memcpy(text + n, "  ,{\"z\":0}", 10); /* what follows the element in the array */
            got = ssewire_walk64((const unsigned char *)text, 0, n + 10, &w, &done);
            for (i = 0; i < n + 10 && end < 0; i++) {
                unsigned ch = (unsigned char)text[i];
                if (i == got) {
                    at_depth = depth, at_str = in_str, at_esc = esc, at_mx = mx, at_cont = cont;
                }
                SSEWIRE_STAT(ch, mx, cont);
                if (esc)
                    esc = 0;
                else if (in_str)
                    in_str = ch != '"', esc = ch == '\\';
                else if (ch == '"')
                    in_str = 1;
                else if (ch == '{' || ch == '[')
                    depth++;
                else if ((ch == '}' || ch == ']') && --depth == 0)
                    end = i + 1;
            }
            if (done) {
                CHECK(got == end && w.depth == 0 && w.cont == cont &&
                          (mx < 0x80 ? w.max_byte < 0x80 : w.max_byte == mx),
                      "level %d, element of %lld bytes: end %lld/%lld", simd, (long long)n, (long long)got,
                      (long long)end);
            } else {
                CHECK(got % 64 == 0 && w.depth == at_depth && w.in_str == at_str && w.esc == at_esc &&
                          w.cont == at_cont && (at_mx < 0x80 ? w.max_byte < 0x80 : w.max_byte == at_mx),
                      "level %d, element of %lld bytes: stopped at %lld (end %lld)", simd, (long long)n, (long long)got,
                      (long long)end);
            }
#ifdef SSEWIRE_SIMD
            CHECK(done || n + 10 - got < 64, "level %d: the vector walk left a whole block", simd);
#else
            CHECK(got == 0 && !done, "without vector instructions nothing is walked");
#endif
        }
    }
}

/* What sw_json_unescape makes of the string value of {"t": ...}. */
static int unescaped_is(const char *json, const char *want) {
    sw_json_val v;
    char out[256];
    sw_ssize n;
    if (locate(json, "t", NULL, &v) != 1 || v.kind != SW_J_STRING || !v.escaped)
        return 0;
    n = sw_json_unescape(&v, out);
    return want == NULL ? n == -1 : n == (sw_ssize)strlen(want) && memcmp(out, want, (size_t)n) == 0;
}

static void test_json_unescape(void) {
    CHECK(unescaped_is("{\"t\":\"a\\nb\\t\\\"\\\\\\/\\b\\f\\r\"}", "a\nb\t\"\\/\b\f\r"), "the named escapes");
    CHECK(unescaped_is("{\"t\":\"\\u00e9\\u20AC\\ud83d\\ude00.\"}", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80."),
          "\\u escapes, a surrogate pair");
    CHECK(unescaped_is("{\"t\":\"\\ud83d.\"}", NULL), "a lone high surrogate");
    CHECK(unescaped_is("{\"t\":\"\\ude00\"}", NULL), "a lone low surrogate");
}

/* A float_text for the test: a marker with the digits' length, so the test sees which numbers reach it. */
static int float_marker(const char *digits, char *out) {
    if (strcmp(digits, "1e999") == 0)
        return -1; /* refused, as Python's refuses a number that is not finite */
    return sprintf(out, "F%zu", strlen(digits));
}

static int compact_is(const char *json, const char *want) {
    char out[SW_JSON_COMPACT_ROOM(200)];
    sw_ssize n = sw_json_compact_with(json, (sw_ssize)strlen(json), out, float_marker);
    return want == NULL ? n == -1 : n == (sw_ssize)strlen(want) && memcmp(out, want, (size_t)n) == 0;
}

static void test_json_compact(void) {
    CHECK(compact_is(" { \"a\" : [ 1 , -0 , 2.50 , 1E3 ] ,\n\"b\":{ }, \"c\":[ ] } ",
                     "{\"a\":[1,0,F4,F3],\"b\":{},\"c\":[]}"),
          "whitespace, -0, floats through float_text");
    CHECK(compact_is("[\"\\u0041\\/\\n\\u001f\\u00e9\\\"\"]", "[\"A/\\n\\u001f\xC3\xA9\\\"\"]"),
          "json.dumps's escapes");
    CHECK(compact_is("[true,false,null]", "[true,false,null]"), "literals");
    CHECK(compact_is("[1e999]", NULL), "a number float_text refuses");
    CHECK(compact_is("{\"a\":1,\"a\":2}", NULL), "a repeated key");
    CHECK(compact_is("{\"\\u0061\":1}", NULL), "a key spelled with an escape");
    CHECK(compact_is("[\"\\ud800\"]", NULL), "a lone surrogate");
}

int main(void) {
    test_crc32();
    test_utf8_seq();
    test_utf8_fill();
    test_utf8_check();
    test_byte_stats();
    test_line_ends();
    test_element_walk();
    test_json_locate();
    test_json_locate_element();
    test_utf8_of_str();
    test_json_unescape();
    test_json_compact();
    if (failures) {
        fprintf(stderr, "%d C kernel check(s) failed\n", failures);
        return 1;
    }
    printf("C kernels: every check holds (vector loops: %s)\n", ssewire_select_simd(1) == 2   ? "AVX2 and SSE2"
                                                                : ssewire_select_simd(1) == 1 ? "SSE2"
                                                                                              : "none, plain C");
    return 0;
}
