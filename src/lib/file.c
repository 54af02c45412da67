/* file_read: open, fstat, read to the limit; the only I/O of the helpers. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

char *file_read(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), why = 0;

	if (fd < 0) {
		why = errno;
		errf(err, errlen, "cannot read %s: %s", path, strerror(why));
		errno = why;
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		why = EINVAL;
		errf(err, errlen, "cannot read %s: not a regular file", path);
		goto fail;
	}
	if ((buf = malloc(max + 1)) == NULL) {
		why = ENOMEM;
		errf(err, errlen, "cannot read %s: out of memory", path);
		goto fail;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			why = errno;
			errf(err, errlen, "cannot read %s: %s", path, strerror(why));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			why = EFBIG;
			errf(err, errlen, "%s is larger than %zu bytes", path, max);
			goto fail;
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	if (buf != NULL) {
		explicit_bzero(buf, max + 1); /* it may have held part of a key */
		free(buf);
	}
	close(fd);
	errno = why;
	return NULL;
}
