/* Strict JSON validation that locates a few members of a top-level object without building anything.
 *
 * sw_json_locate(p, n, paths, vals) validates the UTF-8 text p[0..n) as one RFC 8259 JSON text whose value is an
 * object, and fills vals[i] with where the member named by paths[i] (one key, or a key of the top-level object
 * then a key of the object it holds) is: its kind and, for strings and numbers, its bytes. Duplicate keys: the
 * last one counts, as json.loads does. It returns 1 on success and 0 when the caller must take the full decode
 * instead: the text is not strict JSON (NaN, trailing commas, control characters in strings ...), is not an
 * object, nests deeper than SW_JSON_MAX_DEPTH, or spells a key with an escape at a level where a path looks.
 * It never allocates and never raises. sw_json_string() decodes a located string to a Python str.
 */
#ifndef SW_JSON_H
#define SW_JSON_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SW_JSON_MAX_PATHS 8
#define SW_JSON_MAX_DEPTH 256

enum { SW_J_ABSENT = 0, SW_J_STRING, SW_J_INT, SW_J_NULL, SW_J_OTHER };

typedef struct {
    int kind;
    int escaped;       /* a string holding a backslash escape */
    const char *start; /* a string's bytes between its quotes, or a number's bytes */
    Py_ssize_t len;
} sw_json_val;

typedef struct {
    int n;
    const char *key1[SW_JSON_MAX_PATHS];
    Py_ssize_t len1[SW_JSON_MAX_PATHS];
    const char *key2[SW_JSON_MAX_PATHS]; /* NULL: a member of the top-level object itself */
    Py_ssize_t len2[SW_JSON_MAX_PATHS];
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
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
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

static const char *sw_json_skip_value(const char *p, const char *e, int depth);

/* p at '{' or '['; past the closing bracket, or NULL. */
static const char *sw_json_skip_container(const char *p, const char *e, int depth) {
    int object = *p == '{';
    char close = object ? '}' : ']';
    int escaped;
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
        if (!p)
            return NULL;
        p = sw_json_ws(p, e);
        if (p >= e)
            return NULL;
        if (*p == close)
            return p + 1;
        if (*p != ',')
            return NULL;
        p = sw_json_ws(p + 1, e);
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
    v->kind = *p == 'n' ? SW_J_NULL : SW_J_OTHER;
    v->escaped = 0;
    v->start = NULL;
    v->len = 0;
    return end;
}

static inline int sw_json_key_is(const char *k, Py_ssize_t klen, const char *want, Py_ssize_t wlen) {
    return klen == wlen && (klen == 0 || (k[0] == want[0] && memcmp(k, want, (size_t)klen) == 0));
}

/* One object's members: level 1 (top level, parent -1) or level 2 (inside the member key1 == paths[parent]'s
 * key1). Members that no path names are validated and skipped. */
static const char *sw_json_members(const char *p, const char *e, const sw_json_paths *paths, sw_json_val *vals,
                                   int level, int parent) {
    const char *key;
    Py_ssize_t klen;
    int escaped, i, matched;
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
        if (escaped)
            return NULL; /* a key spelled with an escape: let the full decode read it */
        klen = p - key - 1;
        p = sw_json_ws(p, e);
        if (p >= e || *p != ':')
            return NULL;
        p = sw_json_ws(p + 1, e);
        matched = 0;
        for (i = 0; i < paths->n && !matched; i++) {
            if (level == 1) {
                if (!sw_json_key_is(key, klen, paths->key1[i], paths->len1[i]))
                    continue;
                if (paths->key2[i] == NULL) {
                    p = sw_json_take_value(p, e, 1, &vals[i]);
                } else {
                    int j;
                    for (j = 0; j < paths->n; j++) /* a repeated parent key: only the last one counts */
                        if (paths->key2[j] != NULL && sw_json_key_is(key, klen, paths->key1[j], paths->len1[j]))
                            vals[j].kind = SW_J_ABSENT;
                    p = (p < e && *p == '{') ? sw_json_members(p, e, paths, vals, 2, i) : sw_json_skip_value(p, e, 1);
                }
                matched = 1;
            } else if (paths->key2[i] != NULL &&
                       sw_json_key_is(paths->key1[i], paths->len1[i], paths->key1[parent], paths->len1[parent]) &&
                       sw_json_key_is(key, klen, paths->key2[i], paths->len2[i])) {
                p = sw_json_take_value(p, e, 2, &vals[i]);
                matched = 1;
            }
        }
        if (!matched)
            p = sw_json_skip_value(p, e, level);
        if (!p)
            return NULL;
        p = sw_json_ws(p, e);
        if (p >= e)
            return NULL;
        if (*p == '}')
            return p + 1;
        if (*p != ',')
            return NULL;
        p = sw_json_ws(p + 1, e);
    }
}

static int sw_json_locate(const char *text, Py_ssize_t n, const sw_json_paths *paths, sw_json_val *vals) {
    const char *e = text + n;
    const char *p;
    memset(vals, 0, sizeof(sw_json_val) * (size_t)paths->n);
    p = sw_json_ws(text, e);
    if (p >= e || *p != '{')
        return 0;
    p = sw_json_members(p, e, paths, vals, 1, -1);
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
