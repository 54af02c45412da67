/*
 * The one growable NUL-terminated byte buffer (as curl's dynbuf): it may
 * start in caller-provided storage and move to the heap when it grows, and it
 * may have a size limit. A failed append (memory ran out, or the limit would
 * be passed: then too_big is set too) sets oom, and later appends do nothing.
 * The buffer owns its heap memory (never the caller's storage); strbuf_free
 * or strbuf_take releases it.
 */
#ifndef DISTENV_STRBUF_H
#define DISTENV_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *buf; /* NULL until something is reserved */
	size_t len;
	size_t cap;
	size_t max;  /* the most bytes len may reach; 0: no limit */
	int oom;     /* an append failed */
	int too_big; /* ... because of max */
	char *stack; /* caller's first storage (never freed), or NULL */
};

void strbuf_init(struct strbuf *sb);
/* An empty buffer that refuses to hold more than max bytes. */
void strbuf_init_max(struct strbuf *sb, size_t max);
/* An empty buffer that starts in stack[size] (size > 0) and moves to the heap to grow. */
void strbuf_init_stack(struct strbuf *sb, char *stack, size_t size);
/* Makes room for extra more bytes and the NUL. Returns 0, or -1 (sets oom, maybe too_big). */
int strbuf_reserve(struct strbuf *sb, size_t extra);
/*
 * The capacity strbuf_reserve(sb, extra) would leave (sb->cap when it has room),
 * so that a caller can account for memory before it is taken; 0 past the limit.
 */
size_t strbuf_cap_for(const struct strbuf *sb, size_t extra);
void strbuf_append(struct strbuf *sb, const char *s, size_t n);
void strbuf_puts(struct strbuf *sb, const char *s);
/* Appends one byte: inline, a store when there is room (printers call it per token). */
static inline void strbuf_putc(struct strbuf *sb, char c)
{
	if (!sb->oom && sb->len + 1 < sb->cap) {
		sb->buf[sb->len++] = c;
		sb->buf[sb->len] = '\0';
	} else {
		strbuf_append(sb, &c, 1);
	}
}
/* Appends n bytes: inline, a copy when there is room (the patch writer's tokens). */
static inline void strbuf_put(struct strbuf *sb, const char *s, size_t n)
{
	if (!sb->oom && sb->buf != NULL && sb->cap - sb->len > n) {
		__builtin_memcpy(sb->buf + sb->len, s, n);
		sb->len += n;
		sb->buf[sb->len] = '\0';
	} else {
		strbuf_append(sb, s, n);
	}
}
/* strbuf_put of a string literal. */
#define strbuf_lit(sb, lit) strbuf_put((sb), (lit), sizeof(lit) - 1)
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties the buffer (keeps its memory) and clears oom and too_big. */
void strbuf_reset(struct strbuf *sb);
/* Returns the text as a malloc'd string (caller frees), or NULL after a failed append; resets sb.
 */
char *strbuf_take(struct strbuf *sb);
/* Frees the heap memory (not the caller's storage) and empties sb. */
void strbuf_free(struct strbuf *sb);

#endif
