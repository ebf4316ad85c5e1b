/* SPDX-License-Identifier: MIT */
/*
 * The trace reader's fast JSON tokenizer (issue 13: the reader within 1.5x of simdjson's rate).
 * It calls yajl's callbacks in the order yajl would, for the JSON text yajl accepts in its default
 * configuration (no comments, strings validated as UTF-8, one top-level value), so that parse.c's
 * state machine runs unchanged on either. It accepts a subset of that text: whatever it does not
 * handle itself (a syntax error, a lone UTF-16 surrogate escape, the \v and \f yajl counts as
 * white space, a token longer than ERG__TOKEN_MAX, a document that ends early, a callback that
 * stops) makes it bail out, and the caller reads the file again with yajl, whose verdict and
 * messages then stand. So a file either reads here exactly as yajl reads it, or is read by yajl.
 *
 * Speed comes from what yajl does byte by byte: strings are scanned 16 bytes at a time (SSE2, on
 * every x86-64) for the quote, the backslash and the bytes below 0x20 or above 0x7f, and there is
 * no separate pass over the bytes to bound the tokens (parse.c's tokscan, which the yajl path
 * needs). The objects and values no callback needs (skipped events, unread fields) are checked by
 * fast_skip, a tighter loop of the same checks without callbacks or saved states.
 *
 * What bounds the speed is less the instructions than the chain of dependent steps: where a token
 * starts depends on where the one before ended, found by a load, a compare and a bit scan. The
 * keys every event has, written as Kineto writes them ("pid": ), are therefore recognised from
 * their bytes (a predicted branch), so that finding the value does not wait on scanning the key.
 * A block index of 64-byte blocks (simdjson's stage 1, in SSE2) was tried for the skipped
 * objects and was slower (docs/trace.md, Speed).
 */
#include "trace_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The tokenizer's helpers are inlined into erg__jscan_feed, each at its few call sites. */
#if defined(__GNUC__)
#define HOT static inline __attribute__((always_inline))
#else
#define HOT static inline
#endif

enum jstate {
    J_TOP,       /* the top-level value */
    J_ARR_FIRST, /* after '[': a value or ']' */
    J_ARR_VALUE, /* after ',' in an array: a value */
    J_ARR_NEXT,  /* after an element: ',' or ']' */
    J_OBJ_FIRST, /* after '{': a key or '}' */
    J_OBJ_KEY,   /* after ',' in an object: a key */
    J_OBJ_COLON, /* after a key: ':' */
    J_OBJ_VALUE, /* after ':': a value */
    J_OBJ_NEXT,  /* after a member: ',' or '}' */
    J_DONE       /* the top-level value is complete: white space only */
};

struct erg__jscan {
    const yajl_callbacks *cb;
    void *ctx;
    enum jstate state;
    unsigned char *stack; /* 1 array, 0 object, per open container */
    size_t depth, stack_cap;
    unsigned char cur; /* the innermost container: 0 object, 1 array, 2 none (top level) */
    int skip;          /* no callbacks until the object at depth skip_depth closes */
    int skip_cat;      /* a "cat" key in the skipped object bails out too */
    int fast_off;      /* fast_skip gave up on this skipped object: the general path reads it */
    int skip_value;    /* the value of the key just reported needs no callbacks */
    size_t skip_depth;
    unsigned char *dec; /* a string with escapes, decoded */
    size_t dec_cap;
};

erg__jscan *erg__jscan_new(const yajl_callbacks *cb, void *ctx)
{
    erg__jscan *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cb = cb;
    s->ctx = ctx;
    s->state = J_TOP;
    s->cur = 2;
    return s;
}

void erg__jscan_free(erg__jscan *s)
{
    if (!s)
        return;
    free(s->stack);
    free(s->dec);
    free(s);
}

void erg__jscan_skip_object(erg__jscan *s, int watch_cat)
{
    s->skip = 1;
    s->skip_cat = watch_cat;
    s->fast_off = 0;
    s->skip_depth = s->depth;
}

void erg__jscan_skip_value(erg__jscan *s)
{
    s->skip_value = 1;
}

int erg__jscan_complete(const erg__jscan *s)
{
    return s->state == J_DONE;
}

/* Result of scanning one token from p. */
enum { TOK_OK = 0, TOK_MORE = 1, TOK_BAIL = 2 };

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Scan a string body from p (after the opening quote) to its closing quote: *close is the quote's
 * address, *esc whether a backslash occurs. Checks what yajl's lexer checks: escapes (\" \\ \/ \b
 * \f \n \r \t \uXXXX), no byte below 0x20, and UTF-8 multi-byte sequences (a lead byte and its
 * continuation bytes; yajl does not look further). */
HOT int scan_string(const unsigned char *p, const unsigned char *end, const unsigned char **close,
                    int *esc)
{
    *esc = 0;
    for (;;) {
#if defined(__SSE2__)
        const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                      space = _mm_set1_epi8(0x20);
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            __m128i q = _mm_cmpeq_epi8(v, quote);
            /* signed compare: bytes >= 0x80 are negative, so "< 0x20" also finds them */
            __m128i m =
                _mm_or_si128(_mm_or_si128(q, _mm_cmpeq_epi8(v, bslash)), _mm_cmplt_epi8(v, space));
            unsigned mask = (unsigned)_mm_movemask_epi8(m);
            if (mask) {
                /* the first special byte is the closing quote: known from the masks, without
                 * reading it back */
                if (mask & (0u - mask) & (unsigned)_mm_movemask_epi8(q)) {
                    *close = p + __builtin_ctz(mask);
                    return TOK_OK;
                }
                p += __builtin_ctz(mask);
                goto special;
            }
            p += 16;
        }
#endif
        while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80)
            p++;
        if (p == end)
            return TOK_MORE;
#if defined(__SSE2__)
    special:;
#endif
        unsigned char c = *p;
        if (c == '"') {
            *close = p;
            return TOK_OK;
        }
        if (c == '\\') {
            *esc = 1;
            if (end - p < 2)
                return TOK_MORE;
            switch (p[1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                p += 2;
                continue;
            case 'u':
                if (end - p < 6)
                    return TOK_MORE;
                for (int k = 2; k < 6; k++)
                    if (hexval(p[k]) < 0)
                        return TOK_BAIL;
                p += 6;
                continue;
            default:
                return TOK_BAIL;
            }
        }
        if (c < 0x20)
            return TOK_BAIL;
        /* c >= 0x80: the lead byte of a multi-byte sequence */
        size_t more = (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : 0;
        if (more == 0)
            return TOK_BAIL;
        for (size_t k = 1; k <= more; k++) {
            if (p + k >= end)
                return TOK_MORE;
            if ((p[k] >> 6) != 0x2)
                return TOK_BAIL;
        }
        p += more + 1;
    }
}

/* Decode a string body with escapes as yajl does (yajl_string_decode): \u0000 gives a NUL byte;
 * a UTF-16 surrogate makes the caller bail out (yajl's handling of lone and paired surrogates is
 * its own, and yajl then reads the file). */
static int decode(erg__jscan *s, const unsigned char *p, const unsigned char *end, size_t *len)
{
    size_t need = (size_t)(end - p) + 1;
    if (need > s->dec_cap) {
        size_t cap = need < 256 ? 256 : need;
        unsigned char *d = realloc(s->dec, cap);
        if (!d)
            return TOK_BAIL;
        s->dec = d;
        s->dec_cap = cap;
    }
    unsigned char *o = s->dec;
    while (p < end) {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        unsigned char e = p[1];
        p += 2;
        switch (e) {
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
            unsigned cp = 0;
            for (int k = 0; k < 4; k++)
                cp = cp << 4 | (unsigned)hexval(p[k]);
            p += 4;
            if (cp >= 0xd800 && cp <= 0xdfff)
                return TOK_BAIL;
            if (cp < 0x80) {
                *o++ = (unsigned char)cp;
            } else if (cp < 0x800) {
                *o++ = (unsigned char)(0xc0 | cp >> 6);
                *o++ = (unsigned char)(0x80 | (cp & 0x3f));
            } else {
                *o++ = (unsigned char)(0xe0 | cp >> 12);
                *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
                *o++ = (unsigned char)(0x80 | (cp & 0x3f));
            }
            break;
        }
        default: /* '"', '\\', '/' */
            *o++ = e;
            break;
        }
    }
    *len = (size_t)(o - s->dec);
    return TOK_OK;
}

/* First byte of [p, end) that is not a decimal digit, or end. */
HOT const unsigned char *skip_digits(const unsigned char *p, const unsigned char *end)
{
#if defined(__SSE2__)
    const __m128i below = _mm_set1_epi8('0' - 1), above = _mm_set1_epi8('9' + 1);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i dig = _mm_and_si128(_mm_cmpgt_epi8(v, below), _mm_cmplt_epi8(v, above));
        unsigned mask = ~(unsigned)_mm_movemask_epi8(dig) & 0xffffu;
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
#endif
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    return p;
}

/* Scan a number from p as yajl's lexer does: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
 * A number that reaches the end of the bytes may go on in the next chunk (TOK_MORE) unless eof. */
HOT int scan_number(const unsigned char *p, const unsigned char *end, int eof,
                    const unsigned char **stop)
{
#define NUM_END()                                                                                  \
    do {                                                                                           \
        if (p == end)                                                                              \
            return eof ? TOK_BAIL : TOK_MORE;                                                      \
    } while (0)
#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')
#if defined(__SSE2__)
    /* The common forms, digits and digits.digits (timestamps, ids), ending within 16 bytes: one
     * block compare instead of a branch per part; anything else (a sign, an exponent, a leading
     * zero before digits, a longer number, the end of the bytes) takes the general path below,
     * which gives the same stop for these forms. */
    if (end - p >= 16) {
        const __m128i below = _mm_set1_epi8('0' - 1), above = _mm_set1_epi8('9' + 1);
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned other = ~(unsigned)_mm_movemask_epi8(
                             _mm_and_si128(_mm_cmpgt_epi8(v, below), _mm_cmplt_epi8(v, above))) &
                         0xffffu; /* bit i: p[i] is not a digit */
        unsigned n1 = (unsigned)__builtin_ctz(other | 0x10000u);
        if (n1 > 0 && n1 < 16 && (p[0] != '0' || n1 == 1)) {
            const unsigned char *q = p + n1;
            int ok = 1;
            if (*q == '.') {
                unsigned rest = other >> (n1 + 1); /* non-digits after the point */
                if (rest && (rest & 1u) == 0)
                    q += 1 + (unsigned)__builtin_ctz(rest);
                else
                    ok = 0;
            }
            if (ok && *q != 'e' && *q != 'E') {
                *stop = q;
                return TOK_OK;
            }
        }
    }
#endif
    if (*p == '-')
        p++;
    NUM_END();
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        p = skip_digits(p + 1, end);
    } else {
        return TOK_BAIL;
    }
    if (p == end)
        goto at_end;
    if (*p == '.') {
        p++;
        NUM_END();
        if (!IS_DIGIT(*p))
            return TOK_BAIL;
        p = skip_digits(p + 1, end);
        if (p == end)
            goto at_end;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        NUM_END();
        if (*p == '+' || *p == '-')
            p++;
        NUM_END();
        if (!IS_DIGIT(*p))
            return TOK_BAIL;
        while (p < end && IS_DIGIT(*p))
            p++;
        if (p == end)
            goto at_end;
    }
    *stop = p;
    return TOK_OK;
at_end:
    if (!eof)
        return TOK_MORE;
    *stop = p;
    return TOK_OK;
#undef NUM_END
#undef IS_DIGIT
}

/* JSON's white space: ' ', '\n', '\t', '\r' (yajl's \v and \f are left to yajl). */
static const unsigned char space_tab[256] = {[' '] = 1, ['\n'] = 1, ['\t'] = 1, ['\r'] = 1};

static int is_space(unsigned char c)
{
    return space_tab[c];
}

/* Past the JSON white space that starts at p (p < end, a white space byte): mostly one space, or
 * a newline and an indentation. */
HOT const unsigned char *skip_space(const unsigned char *p, const unsigned char *end)
{
    p++; /* the callers saw white space at p */
    if (p == end || !is_space(*p))
        return p;
#if defined(__SSE2__)
    const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), tab = _mm_set1_epi8('\t'),
                  cr = _mm_set1_epi8('\r');
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i w = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, cr)));
        unsigned mask = ~(unsigned)_mm_movemask_epi8(w) & 0xffffu;
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
#endif
    while (p < end && is_space(*p))
        p++;
    return p;
}

HOT int push(erg__jscan *s, unsigned char kind)
{
    if (s->depth == s->stack_cap) {
        size_t cap = s->stack_cap ? s->stack_cap * 2 : 64;
        unsigned char *p = realloc(s->stack, cap);
        if (!p)
            return -1;
        s->stack = p;
        s->stack_cap = cap;
    }
    s->stack[s->depth++] = kind;
    s->cur = kind;
    return 0;
}

HOT void pop(erg__jscan *s)
{
    s->depth--;
    s->cur = s->depth ? s->stack[s->depth - 1] : 2;
}

/* A callback that returned 0 (parse.c cancels with a message): bail, yajl repeats it. */
#define CALL(fn, ...)                                                                              \
    do {                                                                                           \
        if (!s->skip && s->cb->fn && !s->cb->fn(s->ctx, __VA_ARGS__))                              \
            return ERG__JSCAN_BAIL;                                                                \
    } while (0)
#define CALL0(fn)                                                                                  \
    do {                                                                                           \
        if (!s->skip && s->cb->fn && !s->cb->fn(s->ctx))                                           \
            return ERG__JSCAN_BAIL;                                                                \
    } while (0)

/* A value's state, for resuming: where a value is expected in the innermost container. */
HOT enum jstate value_state(const erg__jscan *s)
{
    return s->cur == 0 ? J_OBJ_VALUE : s->cur == 1 ? J_ARR_VALUE : J_TOP;
}

/* Scan a string token at p (an opening quote) and decode it when it has escapes and its text is
 * needed. TOK_OK: *str, *n are its text and *after the byte past its closing quote. */
HOT int string_token(erg__jscan *s, const unsigned char *p, const unsigned char *end, int eof,
                     int need_text, const unsigned char **str, size_t *n,
                     const unsigned char **after)
{
    const unsigned char *close = NULL;
    int esc;
    int r = scan_string(p + 1, end, &close, &esc);
    if (r == TOK_MORE)
        return (size_t)(end - p) > ERG__TOKEN_MAX + 1 || eof ? TOK_BAIL : TOK_MORE;
    if (r == TOK_BAIL || (size_t)(close - p - 1) > ERG__TOKEN_MAX)
        return TOK_BAIL;
    *str = p + 1;
    *n = (size_t)(close - p - 1);
    if (esc && need_text) {
        if (decode(s, p + 1, close, n) != TOK_OK)
            return TOK_BAIL;
        *str = s->dec;
    }
    *after = close + 1;
    return TOK_OK;
}

/* The rest of a skipped object, from just after one of its members (where ',' or '}' comes) to
 * its closing brace, whose address it returns: checked as the general path below checks it in skip
 * mode (strings by scan_string, numbers by scan_number, the literals, the grammar), but with no
 * callbacks, no saved state and the nesting in a register, since no callback can see these bytes
 * (most of a trace's bytes are skipped host events). NULL when it cannot finish here: the bytes
 * run out, or anything comes that the general path must decide or refuse (a syntax error, a "ph"
 * key or, with watch_cat, a "cat" key of the object itself, such a key with escapes, nesting
 * deeper than 63, a token over ERG__TOKEN_MAX); the general path then reads the same bytes from
 * p. With one_value, p is where a value comes (after a key's ':') and the address past that value
 * is returned. */
HOT const unsigned char *fast_skip(const unsigned char *p, const unsigned char *end, int watch_cat,
                                   int one_value)
{
    uint64_t arrays = 0; /* bit d: the container open at nesting d + 1 is an array */
    unsigned depth = 0;  /* containers open inside the skipped object */
    const unsigned char *close, *stop;
    int esc;
#define FSPACE()                                                                                   \
    do {                                                                                           \
        if (p < end && space_tab[*p])                                                              \
            p = skip_space(p, end);                                                                \
        if (p == end)                                                                              \
            return NULL;                                                                           \
    } while (0)
    if (one_value)
        goto value;
    goto next;
value:
    FSPACE();
    switch (*p) {
    case '"':
        if (scan_string(p + 1, end, &close, &esc) != TOK_OK ||
            (size_t)(close - p - 1) > ERG__TOKEN_MAX)
            return NULL;
        p = close + 1;
        goto next;
    case '{':
        if (depth == 63)
            return NULL;
        arrays &= ~(1ull << depth);
        depth++;
        p++;
        FSPACE();
        if (*p == '}') {
            depth--;
            p++;
            goto next;
        }
        goto key;
    case '[':
        if (depth == 63)
            return NULL;
        arrays |= 1ull << depth;
        depth++;
        p++;
        FSPACE();
        if (*p == ']') {
            depth--;
            p++;
            goto next;
        }
        goto value;
    case 't':
        if (end - p < 4 || memcmp(p, "true", 4) != 0)
            return NULL;
        p += 4;
        goto next;
    case 'f':
        if (end - p < 5 || memcmp(p, "false", 5) != 0)
            return NULL;
        p += 5;
        goto next;
    case 'n':
        if (end - p < 4 || memcmp(p, "null", 4) != 0)
            return NULL;
        p += 4;
        goto next;
    default:
        if (*p != '-' && (*p < '0' || *p > '9'))
            return NULL;
        if (scan_number(p, end, 0, &stop) != TOK_OK || (size_t)(stop - p) > ERG__TOKEN_MAX)
            return NULL;
        p = stop;
        goto next;
    }
next: /* after a value: ',' or the end of the innermost container */
    if (one_value && depth == 0)
        return p;
    FSPACE();
    if (*p == ',') {
        p++;
        if (depth && (arrays >> (depth - 1) & 1))
            goto value;
        FSPACE();
        goto key;
    }
    if (depth == 0)
        return *p == '}' ? p : NULL;
    if (*p != ((arrays >> (depth - 1) & 1) ? ']' : '}'))
        return NULL;
    depth--;
    p++;
    goto next;
key:
    if (depth == 0 && end - p >= 9) {
        /* the keys every Kineto event has, written as Kineto writes them ("pid": ): known at
         * once, so that finding where the value starts waits on no scan (the value itself is read
         * as below) */
        size_t known = 0;
        switch (p[1]) {
        case 'n':
            known = memcmp(p, "\"name\": ", 8) == 0 ? 8 : 0;
            break;
        case 'p':
            known = memcmp(p, "\"pid\": ", 7) == 0 ? 7 : 0;
            break;
        case 't':
            known = memcmp(p, "\"tid\": ", 7) == 0 ? 7 : memcmp(p, "\"ts\": ", 6) == 0 ? 6 : 0;
            break;
        case 'd':
            known = memcmp(p, "\"dur\": ", 7) == 0 ? 7 : 0;
            break;
        case 'a':
            known = memcmp(p, "\"args\": ", 8) == 0 ? 8 : 0;
            break;
        case 'i':
            known = memcmp(p, "\"id\": ", 6) == 0 ? 6 : 0;
            break;
        case 'c': /* flows: their category is not read */
            known = !watch_cat && memcmp(p, "\"cat\": ", 7) == 0 ? 7 : 0;
            break;
        case 'b':
            known = memcmp(p, "\"bp\": ", 6) == 0 ? 6 : 0;
            break;
        default:
            break;
        }
        if (known) {
            p += known;
            goto value;
        }
    }
    if (*p != '"' || scan_string(p + 1, end, &close, &esc) != TOK_OK ||
        (size_t)(close - p - 1) > ERG__TOKEN_MAX)
        return NULL;
    if (depth == 0) {
        /* the key is "ph" (or "cat") when its quotes and letters are the bytes at p: tested
         * together, with one branch (key lengths vary from key to key) */
        if (end - p >= 5) {
            if (esc | (memcmp(p, "\"ph\"", 4) == 0) |
                (watch_cat & (memcmp(p + 1, "cat\"", 4) == 0)))
                return NULL;
        } else {
            size_t n = (size_t)(close - p - 1);
            if (esc || (n == 2 && p[1] == 'p' && p[2] == 'h') ||
                (watch_cat && n == 3 && p[1] == 'c' && p[2] == 'a' && p[3] == 't'))
                return NULL;
        }
    }
    p = close + 1;
    FSPACE();
    if (*p != ':')
        return NULL;
    p++;
    goto value;
#undef FSPACE
}

/*
 * The tokenizer is a pushdown automaton written as labels, one per place in the grammar, so that
 * each token is dispatched on what may come there (a key after '{' or ',', a ':' after a key, ...)
 * instead of on a state variable. The state is stored only when the bytes run out (SAVE).
 */
int erg__jscan_feed(erg__jscan *s, const unsigned char *buf, size_t len, int eof, size_t *used)
{
    const unsigned char *p = buf, *end = buf + len;
    const unsigned char *str, *after;
    size_t n;
    int r;
    enum jstate st = J_DONE;
#define SPACE()                                                                                    \
    do {                                                                                           \
        if (p < end && space_tab[*p])                                                              \
            p = skip_space(p, end);                                                                \
    } while (0)
#define SAVE(state)                                                                                \
    do {                                                                                           \
        st = (state);                                                                              \
        goto save;                                                                                 \
    } while (0)
    switch (s->state) {
    case J_TOP:
    case J_ARR_VALUE:
    case J_OBJ_VALUE:
        goto value;
    case J_ARR_FIRST:
        goto arr_first;
    case J_ARR_NEXT:
        goto arr_next;
    case J_OBJ_FIRST:
        goto obj_first;
    case J_OBJ_KEY:
        goto obj_key;
    case J_OBJ_COLON:
        goto obj_colon;
    case J_OBJ_NEXT:
        goto obj_next;
    case J_DONE:
        goto done;
    }
    return ERG__JSCAN_BAIL;

value:
    SPACE();
    if (p == end)
        SAVE(value_state(s));
    switch (*p) {
    case '"':
        r = string_token(s, p, end, eof, !s->skip, &str, &n, &after);
        if (r == TOK_MORE)
            SAVE(value_state(s));
        if (r != TOK_OK)
            return ERG__JSCAN_BAIL;
        CALL(yajl_string, str, n);
        p = after;
        goto after_value;
    case '{':
        if (push(s, 0) != 0)
            return ERG__JSCAN_BAIL;
        CALL0(yajl_start_map);
        p++;
        goto obj_first;
    case '[':
        if (push(s, 1) != 0)
            return ERG__JSCAN_BAIL;
        CALL0(yajl_start_array);
        p++;
        goto arr_first;
    case 't':
    case 'f':
    case 'n': {
        unsigned char c = *p;
        const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t ln = c == 'f' ? 5 : 4;
        if ((size_t)(end - p) < ln) {
            if (eof || memcmp(p, lit, (size_t)(end - p)) != 0)
                return ERG__JSCAN_BAIL;
            SAVE(value_state(s));
        }
        if (memcmp(p, lit, ln) != 0)
            return ERG__JSCAN_BAIL;
        if (c == 'n')
            CALL0(yajl_null);
        else
            CALL(yajl_boolean, c == 't');
        p += ln;
        goto after_value;
    }
    default: {
        if (*p != '-' && (*p < '0' || *p > '9'))
            return ERG__JSCAN_BAIL;
        const unsigned char *stop = NULL;
        r = scan_number(p, end, eof, &stop);
        if (r == TOK_MORE) {
            if ((size_t)(end - p) > ERG__TOKEN_MAX)
                return ERG__JSCAN_BAIL;
            SAVE(value_state(s));
        }
        if (r != TOK_OK || (size_t)(stop - p) > ERG__TOKEN_MAX)
            return ERG__JSCAN_BAIL;
        CALL(yajl_number, (const char *)p, (size_t)(stop - p));
        p = stop;
        goto after_value;
    }
    }

after_value:
    if (s->cur == 0)
        goto obj_next;
    if (s->cur == 1)
        goto arr_next;
    goto done;

obj_first:
    SPACE();
    if (p == end)
        SAVE(J_OBJ_FIRST);
    if (*p == '}')
        goto obj_end;
    goto key;

obj_key:
    SPACE();
    if (p == end)
        SAVE(J_OBJ_KEY);
key:
    if (*p != '"')
        return ERG__JSCAN_BAIL;
    {
        int own_key = s->skip && s->depth == s->skip_depth;
        r = string_token(s, p, end, eof, !s->skip || own_key, &str, &n, &after);
        if (r == TOK_MORE)
            SAVE(J_OBJ_KEY);
        if (r != TOK_OK)
            return ERG__JSCAN_BAIL;
        /* a second "ph" (or "cat", when it was read) in a skipped event would change what it
         * is: yajl reads it */
        if (own_key && ((n == 2 && memcmp(str, "ph", 2) == 0) ||
                        (s->skip_cat && n == 3 && memcmp(str, "cat", 3) == 0)))
            return ERG__JSCAN_BAIL;
        CALL(yajl_map_key, str, n);
        p = after;
    }
obj_colon:
    SPACE();
    if (p == end)
        SAVE(J_OBJ_COLON);
    if (*p != ':')
        return ERG__JSCAN_BAIL;
    p++;
    if (s->skip_value) { /* a value no callback needs: skipped without callbacks when it can be */
        s->skip_value = 0;
        const unsigned char *q = fast_skip(p, end, 0, 1);
        if (q) {
            p = q;
            goto obj_next;
        }
    }
    goto value;

obj_next:
    if (s->skip && s->depth == s->skip_depth && !s->fast_off) {
        const unsigned char *q = fast_skip(p, end, s->skip_cat, 0);
        if (q) {
            p = q;
            goto obj_end;
        }
        s->fast_off = 1; /* not again in this object: the general path reads the rest */
    }
    SPACE();
    if (p == end)
        SAVE(J_OBJ_NEXT);
    if (*p == ',') {
        p++;
        goto obj_key;
    }
    if (*p != '}')
        return ERG__JSCAN_BAIL;
obj_end:
    pop(s);
    if (s->skip && s->depth < s->skip_depth)
        s->skip = 0; /* the skipped object ends: its end is reported */
    CALL0(yajl_end_map);
    p++;
    goto after_value;

arr_first:
    SPACE();
    if (p == end)
        SAVE(J_ARR_FIRST);
    if (*p == ']')
        goto arr_end;
    goto value;

arr_next:
    SPACE();
    if (p == end)
        SAVE(J_ARR_NEXT);
    if (*p == ',') {
        p++;
        goto value;
    }
    if (*p != ']')
        return ERG__JSCAN_BAIL;
arr_end:
    pop(s);
    CALL0(yajl_end_array);
    p++;
    goto after_value;

done:
    SPACE();
    if (p != end)
        return ERG__JSCAN_BAIL; /* yajl: trailing garbage, or its own white space */
    SAVE(J_DONE);

save:
    s->state = st;
    *used = (size_t)(p - buf);
    return eof && (st != J_DONE || p != end) ? ERG__JSCAN_BAIL : ERG__JSCAN_OK;
#undef SPACE
#undef SAVE
}
