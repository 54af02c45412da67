/*
 * The frameworks wing's own header: the table the program hands the core
 * (core/registry.h), its rows, and the bits of the first five. A framework
 * room includes this; nothing below the frameworks wing does.
 */
#ifndef DISTENV_FRAMEWORKS_H
#define DISTENV_FRAMEWORKS_H

#include "framework.h"

/*
 * A framework's bit in a set of frameworks (config defaults, annotations): the
 * first five rows' names; a later row sets its own bit in its file
 * (test_framework checks that every row has one of its own).
 */
#define FW_PYTORCH    0x1u
#define FW_TENSORFLOW 0x2u
#define FW_JAX        0x4u
#define FW_XGBOOST    0x8u
#define FW_PADDLE     0x10u

extern const struct framework fw_pytorch, fw_tensorflow, fw_jax, fw_xgboost, fw_paddle;

/* Every framework, in the order their variables are injected. */
extern const struct framework *const framework_table[];
extern const size_t framework_count;

#endif
