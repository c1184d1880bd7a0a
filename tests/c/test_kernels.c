/* The compiled scanners' C kernels tested as C, apart from Python: CRC-32 (table and carry-less multiply paths)
 * against a bitwise reference, the line-end scan (vector and byte loops) against a byte-by-byte one, and the strict
 * JSON locator on documents whose answers are known. .ci/run builds it with and without SSE2 and runs it.
 *
 *     gcc -O2 -std=c99 -Wall -Wextra -Werror -Wno-unused-function -I"$PYINC" -Isrc/ssewire tests/c/test_kernels.c \
 *         -o test_kernels && ./test_kernels
 *
 * Exit status 0 when every check holds; each failure is printed. Python.h is only read for its types (Py_ssize_t,
 * Py_UCS4): nothing here calls into the interpreter, so the binary does not link libpython. */
#include <Python.h> /* first, as CPython asks: it sets the feature macros the C library headers read */
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
static Py_ssize_t eol_bytewise(const unsigned char *p, Py_ssize_t pos, Py_ssize_t n, unsigned *maxb, Py_ssize_t *cont) {
    unsigned mx = 0;
    Py_ssize_t c = 0;
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
            Py_ssize_t n = (Py_ssize_t)(next_byte() * 16 + next_byte() % 16), pos = next_byte() % 70, i, want, got;
            unsigned kind = next_byte() % 4, mx_want, mx_got;
            Py_ssize_t c_want, c_got;
            for (i = 0; i < n; i++) { /* ASCII, UTF-8-ish bytes, or sparse line ends */
                unsigned b = next_byte();
                buf[i] = (unsigned char)(kind == 0 ? 0x20 + b % 90 : kind == 1 ? b : b % 200 == 0 ? 0x0A : 0x61);
            }
            if (pos > n)
                pos = n;
            want = eol_bytewise(buf, pos, n, &mx_want, &c_want);
            got = ssewire_eol((const char *)buf, pos, n, &mx_got, &c_got);
            CHECK(got == want && (mx_want < 0x80 ? mx_got < 0x80 : mx_got == mx_want) && c_got == c_want,
                  "level %d, n %zd, pos %zd: end %zd/%zd, max %u/%u, continuations %zd/%zd", simd, (ssize_t)n,
                  (ssize_t)pos, (ssize_t)got, (ssize_t)want, mx_got, mx_want, (ssize_t)c_got, (ssize_t)c_want);
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
    paths.len[0][0] = (Py_ssize_t)strlen(key1);
    if (key2) {
        paths.key[0][1] = key2;
        paths.len[0][1] = key2[0] == '\0' ? SW_JSON_ONLY : (Py_ssize_t)strlen(key2);
    }
    sw_json_prepare(&paths);
    memset(vals, 0, sizeof vals);
    ok = sw_json_locate(text, (Py_ssize_t)strlen(text), &paths, vals);
    *v = vals[0];
    return ok;
}

static int text_is(const sw_json_val *v, const char *want) {
    return v->start != NULL && v->len == (Py_ssize_t)strlen(want) && memcmp(v->start, want, (size_t)v->len) == 0;
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
}

int main(void) {
    test_crc32();
    test_line_ends();
    test_json_locate();
    if (failures) {
        fprintf(stderr, "%d C kernel check(s) failed\n", failures);
        return 1;
    }
    printf("C kernels: every check holds (vector loops: %s)\n", ssewire_select_simd(1) == 2   ? "AVX2 and SSE2"
                                                                : ssewire_select_simd(1) == 1 ? "SSE2"
                                                                                              : "none, plain C");
    return 0;
}
