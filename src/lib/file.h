/*
 * The one bounded whole-file reader: configuration, certificates, keys and
 * kubeconfigs are read through it. The caller owns (and, for a secret,
 * wipes) what it returns; a failed read wipes what it had read.
 */
#ifndef DISTENV_FILE_H
#define DISTENV_FILE_H

#include <stddef.h>

/*
 * Reads a whole regular file of at most max bytes. Returns a malloc'd
 * NUL-terminated buffer (caller frees; wipe it first if it held a secret) and
 * its length in *len, or NULL with "cannot read PATH: why" / "PATH is larger
 * than N bytes" in err, and errno saying why: EFBIG (over max), EINVAL (not
 * a regular file), ENOMEM, or the error of open(2)/read(2). A partial read is
 * wiped before it is freed.
 */
char *file_read(const char *path, size_t max, size_t *len, char *err, size_t errlen)
    __attribute__((warn_unused_result));

#endif
