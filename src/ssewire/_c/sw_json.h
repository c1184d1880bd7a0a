/* Strict JSON validation that locates a few members of a top-level object without building anything.
 *
 * sw_json_locate(p, n, paths, vals) validates the UTF-8 text p[0..n) as one RFC 8259 JSON text whose value is an
 * object, and fills vals[i] with where the value at paths[i] is: its kind and, for strings and numbers, its bytes.
 * A path is up to SW_JSON_MAX_STEPS steps from the top-level object, each a member key or SW_JSON_ONLY, the one
 * element of an array. Duplicate keys: the last one counts, as json.loads does. It returns 1 on success and 0 when
 * the caller must take the full decode instead: the text is not strict JSON (NaN, trailing commas, control
 * characters in strings ...), is not an object, nests deeper than SW_JSON_MAX_DEPTH, spells a key with an escape
 * where a path looks, or has more than one element where a path wants the only one. It never allocates and never
 * raises. sw_json_unescape() gives a located string's UTF-8 with its escapes resolved.
 *
 * One array step may instead be read element by element (paths->each_depth: the step of the paths that reach it;
 * 0, the default, for none): sw_json_locate_each() reads the paths through it in element 0 into vals as
 * sw_json_locate does, in each element after it (up to SW_JSON_MAX_EACH) into an array of vals of its own, and
 * reports how many elements that array has, all in one walk; sw_json_locate() still wants the one element there.
 *
 * Pure C99 (no Python.h): sw_json_py.h makes Python objects with it; tests/c/test_kernels.c tests it as C.
 */
#ifndef SW_JSON_H
#define SW_JSON_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "sw_types.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define SW_JSON_MAX_PATHS 28
#define SW_JSON_MAX_STEPS 8
#define SW_JSON_MAX_DEPTH 256
#define SW_JSON_ONLY (-1)  /* a step's length: the one element of an array */
#define SW_JSON_MAX_EACH 8 /* the elements sw_json_locate_each reads of the each_depth array */

/* The paths a walk looks for are bits of an unsigned mask (sw_json_node, sw_json_locate's 1u << n): every array
 * sized by these macros grows with them, but the masks do not. */
#if SW_JSON_MAX_PATHS < 1 || SW_JSON_MAX_PATHS > 31
#error "SW_JSON_MAX_PATHS: 1 to 31 (the paths are bits of an unsigned mask)"
#endif
#if SW_JSON_MAX_STEPS < 1 || SW_JSON_MAX_STEPS >= SW_JSON_MAX_DEPTH
#error "SW_JSON_MAX_STEPS: at least 1, below SW_JSON_MAX_DEPTH"
#endif

enum { SW_J_ABSENT = 0, SW_J_STRING, SW_J_INT, SW_J_NULL, SW_J_TRUE, SW_J_OBJECT, SW_J_OTHER };

typedef struct {
    int kind;
    int escaped;       /* a string holding a backslash escape */
    const char *start; /* a string's bytes between its quotes, else the value's text (NULL: no text located) */
    sw_ssize len;
} sw_json_val;

/* A located value that is a number (its text starts like one). */
static inline int sw_json_is_number(const sw_json_val *v) {
    return v->start != NULL && v->kind != SW_J_STRING &&
           (v->start[0] == '-' || (v->start[0] >= '0' && v->start[0] <= '9'));
}

typedef struct {
    int n;
    int steps[SW_JSON_MAX_PATHS];
    const char *key[SW_JSON_MAX_PATHS][SW_JSON_MAX_STEPS];
    sw_ssize len[SW_JSON_MAX_PATHS][SW_JSON_MAX_STEPS]; /* SW_JSON_ONLY: the one element of an array */
    unsigned longer[SW_JSON_MAX_STEPS + 1]; /* by depth: the paths with more steps than that (sw_json_prepare) */
    /* Vetoes (bits of paths, 0 from sw_json_prepare; set after it): a text where a path of veto_present is there,
     * or one of veto_value has a value other than null, is one the caller would not read from its vals, so
     * sw_json_locate stops there and returns 0 (as for a shape it cannot read): a member that rules the text out
     * costs no walk of the rest of it. */
    unsigned veto_present;
    unsigned veto_value;
    /* The step whose array is read element by element (see sw_json_locate_element): 0 for none (a path's first step
     * is a key, never an array); set before sw_json_prepare, which derives through_each from it. */
    int each_depth;
    unsigned through_each; /* the paths with SW_JSON_ONLY at each_depth (sw_json_prepare) */
    /* By depth, the distinct keys the paths look for there, each with the paths that do (sw_json_prepare): a
     * member's key is compared with each distinct key once, not with every path's (paths share their first steps). */
    int n_keys[SW_JSON_MAX_STEPS];
    const char *dkey[SW_JSON_MAX_STEPS][SW_JSON_MAX_PATHS];
    sw_ssize dlen[SW_JSON_MAX_STEPS][SW_JSON_MAX_PATHS];
    unsigned dmask[SW_JSON_MAX_STEPS][SW_JSON_MAX_PATHS];
} sw_json_paths;

/* The state of one walk: cleared `shape` when the text is valid JSON of a shape the paths cannot be read from;
 * where the elements of the each_depth array after element 0 are read (each SW_JSON_MAX_PATHS vals; NULL: they
 * are not), and how many elements that array has (0: none, or not an array). */
typedef struct {
    int shape;
    sw_json_val *each_vals;
    int count;
} sw_json_walk;

static inline int sw_json_key_is(const char *k, sw_ssize klen, const char *want, sw_ssize wlen) {
    sw_ssize i;
    if (klen != wlen)
        return 0;
    for (i = 0; i < klen; i++) /* keys are short: a call to memcmp costs more than the comparison */
        if (k[i] != want[i])
            return 0;
    return 1;
}

/* Fill in what sw_json_locate derives from n, steps and len: call once after setting them. */
static inline void sw_json_prepare(sw_json_paths *paths) {
    int d, i, j, k;
    paths->veto_present = 0;
    paths->veto_value = 0;
    paths->through_each = 0;
    for (i = 0; i < paths->n; i++)
        if (paths->each_depth > 0 && paths->each_depth < paths->steps[i] && paths->each_depth < SW_JSON_MAX_STEPS &&
            paths->len[i][paths->each_depth] == SW_JSON_ONLY)
            paths->through_each |= 1u << i;
    for (d = 0; d <= SW_JSON_MAX_STEPS; d++) {
        paths->longer[d] = 0;
        for (i = 0; i < paths->n; i++)
            if (paths->steps[i] > d)
                paths->longer[d] |= 1u << i;
    }
    for (d = 0; d < SW_JSON_MAX_STEPS; d++) {
        k = 0;
        for (i = 0; i < paths->n; i++) {
            if (paths->steps[i] <= d || paths->len[i][d] == SW_JSON_ONLY)
                continue;
            for (j = 0; j < k; j++)
                if (sw_json_key_is(paths->key[i][d], paths->len[i][d], paths->dkey[d][j], paths->dlen[d][j]))
                    break;
            if (j == k) {
                paths->dkey[d][k] = paths->key[i][d];
                paths->dlen[d][k] = paths->len[i][d];
                paths->dmask[d][k] = 0;
                k++;
            }
            paths->dmask[d][j] |= 1u << i;
        }
        paths->n_keys[d] = k;
    }
}

/* The index of the lowest set bit of a non-zero mask. */
static inline int sw_json_low(unsigned bits) {
#if defined(__GNUC__)
    return __builtin_ctz(bits);
#else
    int i = 0;
    while (!(bits & 1u)) {
        bits >>= 1;
        i++;
    }
    return i;
#endif
}

static inline const char *sw_json_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

static inline int sw_json_hex(unsigned char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The bytes of the 8 in w that are a quote, a backslash or below 0x20, as their high bits (SWAR). The lowest set
 * bit always marks a real match (borrows only ever flag bytes above one); bytes >= 0x80 never match. */
static inline uint64_t sw_json_special8(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t quote = w ^ (ones * '"'), slash = w ^ (ones * '\\');
    return (((quote - ones) & ~quote) | ((slash - ones) & ~slash) | ((w - ones * 0x20) & ~w)) & high;
}

/* p at the opening quote; the byte after the closing quote, or NULL when the string is not valid JSON. */
static const char *sw_json_skip_string(const char *p, const char *e, int *escaped) {
    p++;
    *escaped = 0;
    while (p < e) {
        unsigned char c;
#if defined(__SSE2__)
        if (e - p >= 16) { /* sixteen plain bytes at a time; else straight to the first special one */
            const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), low = _mm_set1_epi8(0x1F);
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
                                           _mm_cmpeq_epi8(_mm_min_epu8(v, low), v)); /* v <= 0x1F */
            int mask = _mm_movemask_epi8(special);
            if (!mask) {
                p += 16;
                continue;
            }
            p += __builtin_ctz((unsigned)mask);
        }
#elif defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (e - p >= 8) { /* eight plain bytes at a time; else straight to the first special one */
            uint64_t w, special;
            memcpy(&w, p, 8);
            special = sw_json_special8(w);
            if (!special) {
                p += 8;
                continue;
            }
            p += __builtin_ctzll(special) >> 3;
        }
#endif
        c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c < 0x20)
            return NULL;
        if (c == '\\') {
            *escaped = 1;
            if (++p >= e)
                return NULL;
            c = (unsigned char)*p;
            if (c == 'u') {
                if (e - p < 5)
                    return NULL;
                for (int i = 1; i <= 4; i++)
                    if (sw_json_hex((unsigned char)p[i]) < 0)
                        return NULL;
                p += 5;
                continue;
            }
            if (!strchr("\"\\/bfnrt", c) || c == 0)
                return NULL;
        }
        p++;
    }
    return NULL;
}

/* A number (RFC 8259 grammar); *is_int when it has no fraction and no exponent. NULL when invalid. */
static const char *sw_json_skip_number(const char *p, const char *e, int *is_int) {
    *is_int = 1;
    if (p < e && *p == '-')
        p++;
    if (p >= e)
        return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    } else {
        return NULL;
    }
    if (p < e && *p == '.') {
        *is_int = 0;
        p++;
        if (p >= e || *p < '0' || *p > '9')
            return NULL;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        *is_int = 0;
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (p >= e || *p < '0' || *p > '9')
            return NULL;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    return p;
}

/* After an element or member value ending at p: past the container's `close` (*closed set), past the comma before
 * the next item, or NULL when neither follows. */
static inline const char *sw_json_next_item(const char *p, const char *e, char close, int *closed) {
    p = sw_json_ws(p, e);
    if (p >= e)
        return NULL;
    if (*p == close) {
        *closed = 1;
        return p + 1;
    }
    return *p == ',' ? sw_json_ws(p + 1, e) : NULL;
}

static const char *sw_json_skip_value(const char *p, const char *e, int depth);

/* p at '{' or '['; past the closing bracket, or NULL. */
static const char *sw_json_skip_container(const char *p, const char *e, int depth) {
    int object = *p == '{';
    char close = object ? '}' : ']';
    int escaped, closed = 0;
    if (depth >= SW_JSON_MAX_DEPTH)
        return NULL;
    p = sw_json_ws(p + 1, e);
    if (p < e && *p == close)
        return p + 1;
    for (;;) {
        if (object) {
            if (p >= e || *p != '"')
                return NULL;
            p = sw_json_skip_string(p, e, &escaped);
            if (!p)
                return NULL;
            p = sw_json_ws(p, e);
            if (p >= e || *p != ':')
                return NULL;
            p = sw_json_ws(p + 1, e);
        }
        p = sw_json_skip_value(p, e, depth + 1);
        if (p)
            p = sw_json_next_item(p, e, close, &closed);
        if (!p || closed)
            return p;
    }
}

static inline const char *sw_json_skip_literal(const char *p, const char *e, const char *word, sw_ssize n) {
    return (e - p >= n && memcmp(p, word, (size_t)n) == 0) ? p + n : NULL;
}

/* p at the first byte of a value; past it, or NULL when it is not a valid JSON value. */
static const char *sw_json_skip_value(const char *p, const char *e, int depth) {
    int flag;
    if (p >= e)
        return NULL;
    switch (*p) {
    case '"':
        return sw_json_skip_string(p, e, &flag);
    case '{':
    case '[':
        return sw_json_skip_container(p, e, depth);
    case 't':
        return sw_json_skip_literal(p, e, "true", 4);
    case 'f':
        return sw_json_skip_literal(p, e, "false", 5);
    case 'n':
        return sw_json_skip_literal(p, e, "null", 4);
    default:
        return sw_json_skip_number(p, e, &flag);
    }
}

/* Skip the value at p, recording in *v what it is (string and integer bytes kept). */
static const char *sw_json_take_value(const char *p, const char *e, int depth, sw_json_val *v) {
    const char *end;
    int flag = 0;
    if (p >= e)
        return NULL;
    if (*p == '"') {
        end = sw_json_skip_string(p, e, &flag);
        if (!end)
            return NULL;
        v->kind = SW_J_STRING;
        v->escaped = flag;
        v->start = p + 1;
        v->len = end - p - 2;
        return end;
    }
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
        end = sw_json_skip_number(p, e, &flag);
        if (!end)
            return NULL;
        v->kind = flag ? SW_J_INT : SW_J_OTHER;
        v->escaped = 0;
        v->start = p;
        v->len = end - p;
        return end;
    }
    end = sw_json_skip_value(p, e, depth);
    if (!end)
        return NULL;
    v->kind = *p == 'n' ? SW_J_NULL : *p == 't' ? SW_J_TRUE : *p == '{' ? SW_J_OBJECT : SW_J_OTHER;
    v->escaped = 0;
    v->start = p; /* a literal's or a container's whole text */
    v->len = end - p;
    return end;
}

/* The value at p, reached by the first `depth` steps of the paths in `mask`: the paths that end here get its kind
 * and bytes, the ones that go on are followed into it; it is validated either way. NULL when the text is not valid
 * JSON, or (with w->shape cleared) not a shape the paths can be read from. */
static const char *sw_json_node(const char *p, const char *e, const sw_json_paths *paths, sw_json_val *vals, int depth,
                                unsigned mask, sw_json_walk *w);

static const char *sw_json_at(const char *p, const char *e, const sw_json_paths *paths, sw_json_val *vals, int depth,
                              unsigned mask, sw_json_walk *w) {
    unsigned deeper = mask & paths->longer[depth], ending = mask & ~deeper, bits;
    static const sw_json_val absent = {SW_J_ABSENT, 0, NULL, 0}, object = {SW_J_OBJECT, 0, NULL, 0},
                             array = {SW_J_OTHER, 0, NULL, 0};
    if ((ending & paths->veto_present) || ((ending & paths->veto_value) && p < e && *p != 'n')) {
        w->shape = 0; /* (a value that rules the text out: see sw_json_paths) */
        return NULL;
    }
    for (bits = mask; bits; bits &= bits - 1)
        vals[sw_json_low(bits)] = absent; /* a repeated key: only the last one counts */
    if ((mask & paths->through_each) && depth <= paths->each_depth)
        w->count = 0; /* (and the elements of the array it held: the last one's are counted) */
    if (deeper && p < e && (*p == '{' || *p == '[')) {
        for (bits = ending; bits; bits &= bits - 1)
            vals[sw_json_low(bits)] = *p == '{' ? object : array;
        return sw_json_node(p, e, paths, vals, depth, deeper, w);
    }
    if (ending) {
        sw_json_val v;
        p = sw_json_take_value(p, e, depth, &v);
        for (bits = ending; bits; bits &= bits - 1)
            vals[sw_json_low(bits)] = v;
        return p;
    }
    return sw_json_skip_value(p, e, depth);
}

static const char *sw_json_node(const char *p, const char *e, const sw_json_paths *paths, sw_json_val *vals, int depth,
                                unsigned mask, sw_json_walk *w) {
    const char *key;
    sw_ssize klen;
    int escaped, i, each, count = 0, closed = 0;
    unsigned here, bits;
    if (depth >= SW_JSON_MAX_STEPS)
        return sw_json_skip_value(p, e, depth);
    if (*p == '[') {
        here = 0;
        for (bits = mask; bits; bits &= bits - 1)
            if (paths->len[sw_json_low(bits)][depth] == SW_JSON_ONLY)
                here |= bits & -bits;
        if (!here)
            return sw_json_skip_container(p, e, depth);
        each = depth == paths->each_depth && (here & paths->through_each);
        p = sw_json_ws(p + 1, e);
        if (p < e && *p == ']')
            return p + 1;
        for (;;) {
            if (each) { /* element 0 into vals, the next ones into each_vals, any more only validated */
                if (count == 0)
                    p = sw_json_at(p, e, paths, vals, depth + 1, here, w);
                else if (count < SW_JSON_MAX_EACH && w->each_vals != NULL)
                    p = sw_json_at(p, e, paths, w->each_vals + (count - 1) * SW_JSON_MAX_PATHS, depth + 1, here, w);
                else
                    p = sw_json_skip_value(p, e, depth + 1);
                count++;
            } else if (++count > 1) { /* more than the one element a path wants */
                w->shape = 0;
                return NULL;
            } else {
                p = sw_json_at(p, e, paths, vals, depth + 1, here, w);
            }
            if (p)
                p = sw_json_next_item(p, e, ']', &closed);
            if (p && closed && each)
                w->count = count;
            if (!p || closed)
                return p;
        }
    }
    p = sw_json_ws(p + 1, e);
    if (p < e && *p == '}')
        return p + 1;
    for (;;) {
        if (p >= e || *p != '"')
            return NULL;
        key = p + 1;
        p = sw_json_skip_string(p, e, &escaped);
        if (!p)
            return NULL;
        klen = p - key - 1;
        p = sw_json_ws(p, e);
        if (p >= e || *p != ':')
            return NULL;
        p = sw_json_ws(p + 1, e);
        here = 0;
        for (i = 0; mask && i < paths->n_keys[depth]; i++) { /* (the keys are distinct: one matches at most) */
            unsigned alive = paths->dmask[depth][i] & mask;
            if (alive && sw_json_key_is(key, klen, paths->dkey[depth][i], paths->dlen[depth][i])) {
                here = alive;
                break;
            }
        }
        if (escaped && mask) { /* a key spelled with an escape where a path looks: the full decode can tell */
            w->shape = 0;
            return NULL;
        }
        p = here ? sw_json_at(p, e, paths, vals, depth + 1, here, w) : sw_json_skip_value(p, e, depth + 1);
        if (p)
            p = sw_json_next_item(p, e, '}', &closed);
        if (!p || closed)
            return p;
    }
}

/* sw_json_locate reading every element of the each_depth array (see sw_json_paths): element 0's values into vals,
 * as if it were the only one there, and those of element k (1 <= k < SW_JSON_MAX_EACH) of the paths through it
 * (paths->through_each) into each_vals[(k - 1) * SW_JSON_MAX_PATHS + path]; *count gets the number of elements
 * that array has (0 where there is none, or it is empty: the paths through it are then absent). */
static int sw_json_locate_each(const char *text, sw_ssize n, const sw_json_paths *paths, sw_json_val *vals,
                               sw_json_val *each_vals, int *count) {
    const char *e = text + n;
    const char *p;
    sw_json_walk w = {1, each_vals, 0};
    unsigned all = (1u << paths->n) - 1u;
    *count = 0;
    memset(vals, 0, sizeof(sw_json_val) * (size_t)paths->n);
    p = sw_json_ws(text, e);
    if (p >= e || *p != '{')
        return 0;
    p = sw_json_node(p, e, paths, vals, 0, all, &w);
    if (!p || sw_json_ws(p, e) != e)
        return 0;
    *count = w.count;
    return 1;
}

static int sw_json_locate(const char *text, sw_ssize n, const sw_json_paths *paths, sw_json_val *vals) {
    int count;
    return sw_json_locate_each(text, n, paths, vals, NULL, &count) && count <= 1;
}

/* The UTF-8 of n characters of a str stored `kind` bytes a character (1, 2 or 4: CPython's compact kinds) into out
 * (room for n, 2n, 3n or 4n bytes by kind: sw_json_utf8_room), what the reader locates a non-ASCII payload in: its
 * length, or -1 for a surrogate (a lone one has no UTF-8: such a text is the full decode's). Runs of ASCII go
 * several characters at a time. */
static inline sw_ssize sw_json_utf8_room(int kind, sw_ssize n) {
    return kind == 1 ? 2 * n : kind == 2 ? 3 * n : 4 * n;
}

/* Write code point c (not a surrogate) as UTF-8 at o; returns the byte after it. */
static inline unsigned char *sw_json_put_utf8(unsigned char *o, uint32_t c) {
    if (c < 0x80) {
        *o++ = (unsigned char)c;
    } else if (c < 0x800) {
        *o++ = (unsigned char)(0xC0 | (c >> 6));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        *o++ = (unsigned char)(0xE0 | (c >> 12));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    } else {
        *o++ = (unsigned char)(0xF0 | (c >> 18));
        *o++ = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    return o;
}

/* sw_json_utf8_of for a str of `width` (2 or 4, a constant where it is inlined) bytes a character: 8 bytes of
 * ASCII characters at a time, one character at a time otherwise; -1 for a surrogate. */
static inline sw_ssize sw_json_utf8_of_wide(const void *data, sw_ssize n, unsigned char *o, int width) {
    const unsigned char *start = o;
    const sw_ssize step = 8 / width; /* the characters of 8 bytes */
    const uint64_t mask = width == 2 ? UINT64_C(0xFF80FF80FF80FF80) : UINT64_C(0xFFFFFF80FFFFFF80);
    sw_ssize i = 0, k;
    uint64_t w;
    uint32_t c;
    while (i < n) {
        if (i + step <= n) {
            memcpy(&w, (const char *)data + i * width, 8);
            if ((w & mask) == 0) { /* `step` ASCII characters */
                for (k = 0; k < step; k++)
                    o[k] =
                        (unsigned char)(width == 2 ? ((const uint16_t *)data)[i + k] : ((const uint32_t *)data)[i + k]);
                o += step;
                i += step;
                continue;
            }
        }
        c = width == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
        i++;
        if (c >= 0xD800 && c <= 0xDFFF)
            return -1;
        o = sw_json_put_utf8(o, c);
    }
    return (sw_ssize)(o - start);
}

static sw_ssize sw_json_utf8_of(int kind, const void *data, sw_ssize n, char *out) {
    unsigned char *o = (unsigned char *)out;
    sw_ssize i;
    if (kind == 2)
        return sw_json_utf8_of_wide(data, n, o, 2);
    if (kind == 4)
        return sw_json_utf8_of_wide(data, n, o, 4);
    for (i = 0; i < n; i++) /* 1 byte a character: Latin-1 */
        o = sw_json_put_utf8(o, ((const uint8_t *)data)[i]);
    return (sw_ssize)(o - (unsigned char *)out);
}

/* text[0..n) without the whitespace around it (*n updated). */
static inline const char *sw_json_trim(const char *text, sw_ssize *n) {
    const char *e = text + *n;
    text = sw_json_ws(text, e);
    while (e > text && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\r' || e[-1] == '\t'))
        e--;
    *n = e - text;
    return text;
}

/* -- shapes --------------------------------------------------------------------------------------------------
 *
 * The payloads of one kind of event differ only in their values: the same keys in the same order, the same
 * nesting. A shape is what one located payload taught: its text, where each string value and number in it is (its
 * holes), and, for each path, the hole its value is (or its constant kind: absent, null, true, a container ...).
 * sw_json_match() reads another payload by that shape: every byte between holes must be the same, and each hole
 * a valid string or number again. Such a text is valid JSON of the very same structure (only a token of the same
 * kind changed), so every path ends at the same hole: its values are read without walking the structure. Any
 * difference (a key, a literal, whitespace, a hole of another kind) makes it fail, and the caller locates the
 * payload the full way (and may learn its shape instead). Whitespace around the payload is not part of a shape. */

#define SW_JSON_SHAPE_MAX 2048 /* the longest text a shape is learned from */
#define SW_JSON_SHAPE_HOLES 48 /* the most values a shape has */
#define SW_JSON_SHAPE_EACH 4   /* the most elements of the each_depth array a shape is learned with */
#if SW_JSON_SHAPE_EACH > SW_JSON_MAX_EACH || SW_JSON_SHAPE_HOLES > 32767
#error "SW_JSON_SHAPE_EACH: at most SW_JSON_MAX_EACH; SW_JSON_SHAPE_HOLES: a short holds a hole's index"
#endif
#if SW_JSON_SHAPE_MAX > 1000000
#error "SW_JSON_SHAPE_MAX: a shape's offsets are ints"
#endif

typedef struct {
    sw_ssize len;  /* of text; 0: nothing learned */
    sw_ssize room; /* the bytes text has (SW_JSON_SHAPE_SIZE(room) were allocated) */
    int holes;
    int hole_at[SW_JSON_SHAPE_HOLES]; /* where each hole's token starts in text (a string: its quote) */
    int hole_len[SW_JSON_SHAPE_HOLES];
    char hole_string[SW_JSON_SHAPE_HOLES]; /* 1: a string, 0: a number */
    int path_hole[SW_JSON_MAX_PATHS];      /* -1: the value is constant[i] */
    sw_json_val constant[SW_JSON_MAX_PATHS];
    /* The each_depth array's elements (0 or 1: the paths' values above are all), and for the paths through it
     * (`through`) in each element after the first, the hole of the value, or -1 - its kind (a constant). */
    int count;
    unsigned through;
    short each_hole[SW_JSON_SHAPE_EACH - 1][SW_JSON_MAX_PATHS];
    char text[]; /* room bytes, at most SW_JSON_SHAPE_MAX */
} sw_json_shape;

/* The bytes to allocate for a shape whose text has `room` bytes (a shape is as large as the payloads it learns). */
#define SW_JSON_SHAPE_SIZE(room) (offsetof(sw_json_shape, text) + (size_t)(room))

/* The hole of a shape learned from `text` that the located value v is; -1 for a value that is no hole (absent, a
 * literal or a container), -2 for one not found (not located in this text). */
static int sw_json_hole_of(const sw_json_shape *shape, const char *text, const sw_json_val *v) {
    sw_ssize at;
    int k;
    if (v->kind != SW_J_STRING && !sw_json_is_number(v))
        return -1;
    at = v->start - text - (v->kind == SW_J_STRING);
    for (k = 0; k < shape->holes && shape->hole_at[k] != at; k++) {
    }
    return k == shape->holes ? -2 : k;
}

/* Learn the shape of text[0..n), which sw_json_locate_each() just read into vals (n_paths of them), each_vals and
 * count, the paths through the each_depth array being `through` (paths->through_each). 1 when learned, 0 when the
 * text is too long (for SW_JSON_SHAPE_MAX or the shape's room), has too many values or that array too many
 * elements (SW_JSON_SHAPE_EACH) for a shape (shape->len is then 0). */
static int sw_json_learn(sw_json_shape *shape, const char *text, sw_ssize n, int n_paths, const sw_json_val *vals,
                         const sw_json_val *each_vals, int count, unsigned through) {
    const char *p = text, *e = text + n, *end, *after;
    int flag, k, i;
    unsigned bits;
    shape->len = 0;
    text = sw_json_trim(text, &n);
    e = text + n;
    p = text;
    if (n > SW_JSON_SHAPE_MAX || n > shape->room || count > SW_JSON_SHAPE_EACH)
        return 0;
    shape->holes = 0;
    while (p < e) { /* the text is valid JSON: every '"' here opens a key or a string value */
        char c = *p;
        if (c == '"') {
            end = sw_json_skip_string(p, e, &flag);
            if (!end)
                return 0;
            after = sw_json_ws(end, e);
            if (after < e && *after == ':') { /* a key: part of the shape */
                p = end;
                continue;
            }
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            end = sw_json_skip_number(p, e, &flag);
            if (!end)
                return 0;
        } else {
            p++;
            continue;
        }
        if (shape->holes == SW_JSON_SHAPE_HOLES)
            return 0;
        shape->hole_at[shape->holes] = (int)(p - text); /* n <= SW_JSON_SHAPE_MAX: an int holds it */
        shape->hole_len[shape->holes] = (int)(end - p);
        shape->hole_string[shape->holes] = c == '"';
        shape->holes++;
        p = end;
    }
    for (i = 0; i < n_paths; i++) {
        const sw_json_val *v = &vals[i];
        shape->path_hole[i] = k = sw_json_hole_of(shape, text, v);
        shape->constant[i] = *v;
        if (k == -2)
            return 0;
        if (k == -1) {                       /* absent, a literal or a container */
            shape->constant[i].start = NULL; /* its text is not kept */
            shape->constant[i].len = 0;
        }
    }
    shape->count = count;
    shape->through = through;
    for (k = 1; k < count; k++)
        for (bits = through; bits; bits &= bits - 1) {
            const sw_json_val *v = &each_vals[(k - 1) * SW_JSON_MAX_PATHS + sw_json_low(bits)];
            int hole = sw_json_hole_of(shape, text, v);
            if (hole == -2)
                return 0;
            shape->each_hole[k - 1][sw_json_low(bits)] = (short)(hole == -1 ? -1 - v->kind : hole);
        }
    memcpy(shape->text, text, (size_t)n);
    shape->len = n;
    return 1;
}

/* A located value of a hole matched: its kind and bytes. */
static inline void sw_json_hole_val(const sw_json_shape *shape, int k, const char *start, sw_ssize len, int flag,
                                    sw_json_val *v) {
    v->start = start;
    v->len = len;
    if (shape->hole_string[k]) {
        v->kind = SW_J_STRING;
        v->escaped = flag;
    } else {
        v->kind = flag ? SW_J_INT : SW_J_OTHER;
        v->escaped = 0;
    }
}

/* Read text[0..n) by a learned shape into vals, each_vals and *count (as sw_json_locate_each() would); 0 when the
 * text is not of that shape (they are then undefined). */
static int sw_json_match(const sw_json_shape *shape, const char *text, sw_ssize n, int n_paths, sw_json_val *vals,
                         sw_json_val *each_vals, int *count) {
    const char *q = text, *e = text + n, *end;
    const char *start[SW_JSON_SHAPE_HOLES];
    sw_ssize len[SW_JSON_SHAPE_HOLES], at = 0, gap;
    int flags[SW_JSON_SHAPE_HOLES], k, i, hole;
    unsigned bits;
    if (shape->len == 0)
        return 0;
    text = sw_json_trim(text, &n);
    q = text;
    e = text + n;
    for (k = 0; k < shape->holes; k++) {
        gap = shape->hole_at[k] - at;
        if (e - q < gap || memcmp(q, shape->text + at, (size_t)gap) != 0)
            return 0;
        q += gap;
        if (shape->hole_string[k]) {
            if (q >= e || *q != '"')
                return 0;
            end = sw_json_skip_string(q, e, &flags[k]);
            if (!end)
                return 0;
            start[k] = q + 1;
            len[k] = end - q - 2;
        } else {
            end = sw_json_skip_number(q, e, &flags[k]);
            if (!end)
                return 0;
            start[k] = q;
            len[k] = end - q;
        }
        q = end;
        at = shape->hole_at[k] + shape->hole_len[k];
    }
    gap = shape->len - at;
    if (e - q != gap || memcmp(q, shape->text + at, (size_t)gap) != 0)
        return 0;
    for (i = 0; i < n_paths; i++) {
        k = shape->path_hole[i];
        if (k < 0)
            vals[i] = shape->constant[i];
        else
            sw_json_hole_val(shape, k, start[k], len[k], flags[k], &vals[i]);
    }
    *count = shape->count;
    for (k = 1; k < shape->count; k++)
        for (bits = shape->through; bits; bits &= bits - 1) {
            sw_json_val *v = &each_vals[(k - 1) * SW_JSON_MAX_PATHS + sw_json_low(bits)];
            hole = shape->each_hole[k - 1][sw_json_low(bits)];
            if (hole >= 0) {
                sw_json_hole_val(shape, hole, start[hole], len[hole], flags[hole], v);
            } else {
                v->kind = -1 - hole;
                v->escaped = 0;
                v->start = NULL;
                v->len = 0;
            }
        }
    return 1;
}

static inline void sw_json_utf8(char **out, unsigned cp) {
    char *o = *out;
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    *out = o;
}

static inline unsigned sw_json_u4(const char *p) {
    return (unsigned)(sw_json_hex((unsigned char)p[0]) << 12 | sw_json_hex((unsigned char)p[1]) << 8 |
                      sw_json_hex((unsigned char)p[2]) << 4 | sw_json_hex((unsigned char)p[3]));
}

/* The UTF-8 of a located (validated) string that holds an escape, the escapes resolved, into out (room: v->len
 * bytes, as resolving an escape never lengthens the UTF-8). Its length, or -1 when the string holds a lone surrogate
 * (\uD800-\uDFFF not in a pair), which UTF-8 cannot spell (the full decode keeps those). */
static sw_ssize sw_json_unescape(const sw_json_val *v, char *out) {
    const char *p = v->start, *e = v->start + v->len;
    char *o = out;
    while (p < e) {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        p++;
        switch (*p) {
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'u': {
            unsigned cp = sw_json_u4(p + 1);
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && e - p >= 7 && p[1] == '\\' && p[2] == 'u') {
                unsigned lo = sw_json_u4(p + 3);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF)
                return -1;
            sw_json_utf8(&o, cp);
            break;
        }
        default:
            *o++ = *p;
            break; /* " \ / */
        }
        p++;
    }
    return o - out;
}

/* -- compact text ------------------------------------------------------------------------------------------------
 *
 * sw_json_compact_with(p, n, out, float_text) writes the text json.dumps(json.loads(text), ensure_ascii=False,
 * separators=(",", ":")) gives for the valid JSON value text p[0..n): no whitespace, strings escaped as json.dumps
 * escapes them (", \\ and control characters only, in its spelling), integers as their digits ("-0" as "0"), other
 * numbers as Python's repr of the double they round to, which the caller writes (sw_json_float_text: the compiled
 * reader's is in sw_json_py.h). It returns the length written (at most SW_JSON_COMPACT_ROOM(n): out needs that room),
 * or -1 when it cannot promise that text: a key spelled with an escape or repeated in its object (json.loads keeps the
 * last value, at the first key's place), a number the caller's float_text refuses (Python's: not finite as a double),
 * an integer of more than
 * SW_JSON_COMPACT_INT_DIGITS digits (what json.loads makes of one depends on int_max_str_digits: ssewire's decoder
 * reads it as a float), a lone surrogate, more than SW_JSON_COMPACT_KEYS keys in an object or nesting deeper than
 * SW_JSON_COMPACT_DEPTH. */

#define SW_JSON_COMPACT_KEYS 64
/* The most digits an integer may have for its text to be promised: every Python converts 640 (the lowest
 * int_max_str_digits sys.set_int_max_str_digits accepts), whatever the process set. */
#define SW_JSON_COMPACT_INT_DIGITS 640
/* Every token is written no longer than it is, except a number written as a repr of at most 24 characters (from 3). */
#define SW_JSON_COMPACT_ROOM(n) (8 * (n) + 32)
#define SW_JSON_COMPACT_DEPTH 64
#define SW_JSON_FLOAT_TEXT_MAX 24 /* the longest text a sw_json_float_text may write */

/* Writes to out the text of the JSON number `digits` (NUL-terminated; it has a fraction or an exponent) as the
 * compact text spells it, at most SW_JSON_FLOAT_TEXT_MAX bytes; returns their count, or -1 to refuse the number. */
typedef int (*sw_json_float_text)(const char *digits, char *out);

static const char *sw_json_compact_value(const char *p, const char *e, char **out, int depth,
                                         sw_json_float_text float_text);

static const char *sw_json_compact_string(const char *p, const char *e, char **out) {
    static const char hex[] = "0123456789abcdef";
    char *o = *out;
    *o++ = *p++; /* the opening quote */
    while (p < e && *p != '"') {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        p++;
        if (*p == 'u') {
            unsigned cp = sw_json_u4(p + 1);
            p += 5;
            if (cp >= 0xD800 && cp <= 0xDBFF && e - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                unsigned lo = sw_json_u4(p + 2);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF)
                return NULL;
            if (cp == '"' || cp == '\\') {
                *o++ = '\\';
                *o++ = (char)cp;
            } else if (cp >= 0x20) {
                sw_json_utf8(&o, cp);
            } else {
                char named = cp == '\b'   ? 'b'
                             : cp == '\f' ? 'f'
                             : cp == '\n' ? 'n'
                             : cp == '\r' ? 'r'
                             : cp == '\t' ? 't'
                                          : 0;
                *o++ = '\\';
                if (named) {
                    *o++ = named;
                } else {
                    *o++ = 'u';
                    *o++ = '0';
                    *o++ = '0';
                    *o++ = hex[cp >> 4];
                    *o++ = hex[cp & 15];
                }
            }
            continue;
        }
        if (*p == '/') { /* json.dumps does not escape it */
            *o++ = '/';
        } else {
            *o++ = '\\';
            *o++ = *p;
        }
        p++;
    }
    *o++ = '"';
    *out = o;
    return p + 1;
}

static const char *sw_json_compact_number(const char *p, const char *e, char **out, sw_json_float_text float_text) {
    int is_int;
    const char *end = sw_json_skip_number(p, e, &is_int);
    char *o = *out;
    if (!end)
        return NULL;
    if (is_int) {
        if (end - p - (p[0] == '-') > SW_JSON_COMPACT_INT_DIGITS)
            return NULL;
        if (end - p == 2 && p[0] == '-' && p[1] == '0') {
            *o++ = '0';
        } else {
            memcpy(o, p, (size_t)(end - p));
            o += end - p;
        }
    } else {
        char digits[400];
        sw_ssize len = end - p;
        int written;
        if (len >= (sw_ssize)sizeof(digits))
            return NULL;
        memcpy(digits, p, (size_t)len);
        digits[len] = 0;
        written = float_text(digits, o); /* at most 24 bytes, for a number of at least 3 */
        if (written < 0)
            return NULL;
        o += written;
    }
    *out = o;
    return end;
}

static const char *sw_json_compact_container(const char *p, const char *e, char **out, int depth,
                                             sw_json_float_text float_text) {
    int object = *p == '{';
    char close = object ? '}' : ']';
    const char *keys[SW_JSON_COMPACT_KEYS];
    sw_ssize lens[SW_JSON_COMPACT_KEYS];
    int count = 0, closed = 0, escaped, k;
    if (depth >= SW_JSON_COMPACT_DEPTH)
        return NULL;
    *(*out)++ = *p;
    p = sw_json_ws(p + 1, e);
    if (p < e && *p == close) {
        *(*out)++ = close;
        return p + 1;
    }
    for (;;) {
        if (object) {
            const char *key = p, *end = sw_json_skip_string(p, e, &escaped);
            if (!end || escaped || count == SW_JSON_COMPACT_KEYS)
                return NULL;
            for (k = 0; k < count; k++)
                if (lens[k] == end - key && memcmp(keys[k], key, (size_t)(end - key)) == 0)
                    return NULL;
            keys[count] = key;
            lens[count++] = end - key;
            memcpy(*out, key, (size_t)(end - key));
            *out += end - key;
            *(*out)++ = ':';
            p = sw_json_ws(sw_json_ws(end, e) + 1, e); /* past the colon */
        }
        p = sw_json_compact_value(p, e, out, depth + 1, float_text);
        if (!p)
            return NULL;
        p = sw_json_next_item(p, e, close, &closed);
        if (!p)
            return NULL;
        *(*out)++ = closed ? close : ',';
        if (closed)
            return p;
    }
}

static const char *sw_json_compact_value(const char *p, const char *e, char **out, int depth,
                                         sw_json_float_text float_text) {
    const char *end;
    switch (*p) {
    case '"':
        return sw_json_compact_string(p, e, out);
    case '{':
    case '[':
        return sw_json_compact_container(p, e, out, depth, float_text);
    case 't':
    case 'f':
    case 'n':
        end = p + (*p == 'f' ? 5 : 4);
        memcpy(*out, p, (size_t)(end - p));
        *out += end - p;
        return end;
    default:
        return sw_json_compact_number(p, e, out, float_text);
    }
}

static sw_ssize sw_json_compact_with(const char *p, sw_ssize n, char *out, sw_json_float_text float_text) {
    char *o = out;
    const char *e = p + n;
    p = sw_json_ws(p, e);
    if (p >= e || !sw_json_compact_value(p, e, &o, 0, float_text))
        return -1;
    return o - out;
}

#endif /* SW_JSON_H */
