/* Strict JSON validation that locates a few members of a top-level object without building anything.
 *
 * sw_json_locate(p, n, paths, vals) validates the UTF-8 text p[0..n) as one RFC 8259 JSON text whose value is an
 * object, and fills vals[i] with where the value at paths[i] is: its kind and, for strings and numbers, its bytes.
 * A path is up to SW_JSON_MAX_STEPS steps from the top-level object, each a member key or SW_JSON_ONLY, the one
 * element of an array. Duplicate keys: the last one counts, as json.loads does. It returns 1 on success and 0 when
 * the caller must take the full decode instead: the text is not strict JSON (NaN, trailing commas, control
 * characters in strings ...), is not an object, nests deeper than SW_JSON_MAX_DEPTH, spells a key with an escape
 * where a path looks, or has more than one element where a path wants the only one. It never allocates and never
 * raises. sw_json_string() decodes a located string to a Python str.
 */
#ifndef SW_JSON_H
#define SW_JSON_H

#include <Python.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define SW_JSON_MAX_PATHS 16
#define SW_JSON_MAX_STEPS 6
#define SW_JSON_MAX_DEPTH 256
#define SW_JSON_ONLY (-1) /* a step's length: the one element of an array */

enum { SW_J_ABSENT = 0, SW_J_STRING, SW_J_INT, SW_J_NULL, SW_J_TRUE, SW_J_OTHER };

typedef struct {
    int kind;
    int escaped;       /* a string holding a backslash escape */
    const char *start; /* a string's bytes between its quotes, or a number's bytes */
    Py_ssize_t len;
} sw_json_val;

typedef struct {
    int n;
    int steps[SW_JSON_MAX_PATHS];
    const char *key[SW_JSON_MAX_PATHS][SW_JSON_MAX_STEPS];
    Py_ssize_t len[SW_JSON_MAX_PATHS][SW_JSON_MAX_STEPS]; /* SW_JSON_ONLY: the one element of an array */
} sw_json_paths;

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

static inline const char *sw_json_skip_literal(const char *p, const char *e, const char *word, Py_ssize_t n) {
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
    v->kind = *p == 'n' ? SW_J_NULL : *p == 't' ? SW_J_TRUE : SW_J_OTHER;
    v->escaped = 0;
    v->start = NULL;
    v->len = 0;
    return end;
}

static inline int sw_json_key_is(const char *k, Py_ssize_t klen, const char *want, Py_ssize_t wlen) {
    return klen == wlen && (klen == 0 || (k[0] == want[0] && memcmp(k, want, (size_t)klen) == 0));
}

/* The value at p, reached by the first `depth` steps of the paths in `mask`: the paths that end here get its kind
 * and bytes, the ones that go on are followed into it; it is validated either way. NULL when the text is not valid
 * JSON, or (with *shape cleared) not a shape the paths can be read from. */
static const char *sw_json_node(const char *p, const char *e, const sw_json_paths *paths, sw_json_val *vals, int depth,
                                unsigned mask, int *shape);

static const char *sw_json_at(const char *p, const char *e, const sw_json_paths *paths, sw_json_val *vals, int depth,
                              unsigned mask, int *shape) {
    unsigned deeper = 0, ending;
    int i;
    for (i = 0; i < paths->n; i++) {
        if (!(mask & (1u << i)))
            continue;
        vals[i].kind = SW_J_ABSENT; /* a repeated key: only the last one counts */
        if (paths->steps[i] > depth)
            deeper |= 1u << i;
    }
    ending = mask & ~deeper;
    if (deeper && p < e && (*p == '{' || *p == '[')) {
        for (i = 0; i < paths->n; i++)
            if (ending & (1u << i))
                vals[i].kind = SW_J_OTHER;
        return sw_json_node(p, e, paths, vals, depth, deeper, shape);
    }
    if (ending) {
        sw_json_val v;
        p = sw_json_take_value(p, e, depth, &v);
        for (i = 0; i < paths->n; i++)
            if (ending & (1u << i))
                vals[i] = v;
        return p;
    }
    return sw_json_skip_value(p, e, depth);
}

static const char *sw_json_node(const char *p, const char *e, const sw_json_paths *paths, sw_json_val *vals, int depth,
                                unsigned mask, int *shape) {
    const char *key;
    Py_ssize_t klen;
    int escaped, i, count = 0, closed = 0;
    unsigned here;
    if (depth >= SW_JSON_MAX_STEPS)
        return sw_json_skip_value(p, e, depth);
    if (*p == '[') {
        here = 0;
        for (i = 0; i < paths->n; i++)
            if ((mask & (1u << i)) && paths->len[i][depth] == SW_JSON_ONLY)
                here |= 1u << i;
        if (!here)
            return sw_json_skip_container(p, e, depth);
        p = sw_json_ws(p + 1, e);
        if (p < e && *p == ']')
            return p + 1;
        for (;;) {
            if (++count > 1) { /* more than the one element a path wants */
                *shape = 0;
                return NULL;
            }
            p = sw_json_at(p, e, paths, vals, depth + 1, here, shape);
            if (p)
                p = sw_json_next_item(p, e, ']', &closed);
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
        for (i = 0; i < paths->n; i++)
            if ((mask & (1u << i)) && sw_json_key_is(key, klen, paths->key[i][depth], paths->len[i][depth]))
                here |= 1u << i;
        if (escaped && mask) { /* a key spelled with an escape where a path looks: the full decode can tell */
            *shape = 0;
            return NULL;
        }
        p = here ? sw_json_at(p, e, paths, vals, depth + 1, here, shape) : sw_json_skip_value(p, e, depth + 1);
        if (p)
            p = sw_json_next_item(p, e, '}', &closed);
        if (!p || closed)
            return p;
    }
}

static int sw_json_locate(const char *text, Py_ssize_t n, const sw_json_paths *paths, sw_json_val *vals) {
    const char *e = text + n;
    const char *p;
    int shape = 1;
    unsigned all = (1u << paths->n) - 1u;
    memset(vals, 0, sizeof(sw_json_val) * (size_t)paths->n);
    p = sw_json_ws(text, e);
    if (p >= e || *p != '{')
        return 0;
    p = sw_json_node(p, e, paths, vals, 0, all, &shape);
    if (!p)
        return 0;
    return sw_json_ws(p, e) == e;
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

/* A located (validated) string as a Python str; NULL without an exception set when it holds a lone surrogate
 * (the full decode keeps those), NULL with an exception on memory errors. */
static PyObject *sw_json_string(const sw_json_val *v) {
    const char *p = v->start, *e = v->start + v->len;
    char *buf, *o;
    PyObject *out;
    if (!v->escaped)
        return PyUnicode_DecodeUTF8(p, v->len, NULL);
    buf = (char *)PyMem_Malloc((size_t)v->len + 1); /* unescaping never lengthens the UTF-8 */
    if (!buf)
        return PyErr_NoMemory();
    o = buf;
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
            if (cp >= 0xD800 && cp <= 0xDFFF) {
                PyMem_Free(buf);
                return NULL;
            }
            sw_json_utf8(&o, cp);
            break;
        }
        default:
            *o++ = *p;
            break; /* " \ / */
        }
        p++;
    }
    out = PyUnicode_DecodeUTF8(buf, o - buf, NULL);
    PyMem_Free(buf);
    return out;
}

#endif /* SW_JSON_H */
