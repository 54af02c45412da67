/*
 * The version the Makefile stamps in (-DDISTENV_VERSION, -DDISTENV_GIT_REV),
 * with fallbacks for a build outside it.
 */
#ifndef DISTENV_VERSION_H
#define DISTENV_VERSION_H

#ifndef DISTENV_VERSION
#define DISTENV_VERSION "0.0.0"
#endif
#ifndef DISTENV_GIT_REV
#define DISTENV_GIT_REV "unknown"
#endif

#endif
